//! # memory-markdown
//!
//! Markdown-file-backed agent memory for kaged, the reference floor of
//! ADR-0023: tools `retain`, `recall`, `forget` and `list_tags`; hooks
//! `on_session_start` (show recent entries), `on_session_idle` (save the
//! transcript), `pre_compact` (retain hints) and `post_compact` (save what
//! compaction removed); `agent` or `project` isolation.
//!
//! Entries are markdown files with YAML frontmatter under
//! `<store>/<project_id>/<agent_path>/` (or `<store>/<project_id>/_project/`);
//! see `README.md` next to `Cargo.toml` for the layout and the config.
//!
//! Modules: [`config`] (project and operator-local config), [`paths`]
//! (store resolution and isolation), [`entry`] (the file format and ids),
//! [`store`] (atomic file I/O), [`rank`] (recall ranking), [`hooks`]
//! (transcripts and the session-start text), [`tools`] (tool arguments and
//! answers); the handlers are in `plugin.rs`.

pub mod config;
pub mod entry;
pub mod hooks;
pub mod paths;
mod plugin;
pub mod rank;
mod state;
pub mod store;
pub mod tools;

pub use state::MemoryMarkdown;

/// The plugin's builder: the `#[kaged_plugin]` declarations plus the
/// operator-local `system_config_schema` (from [`config::SystemConfig`]).
pub fn builder(plugin: MemoryMarkdown) -> kaged_plugin_sdk::PluginBuilder {
    plugin
        .plugin_builder()
        .system_config::<config::SystemConfig>()
}
