//! Brokered plugin storage (being implemented).

pub mod rewrite;

pub use rewrite::{rewrite, RewriteError, Rewritten, StatementKind};

/// The storage prefix of a plugin: `plugin_<name with - replaced by _>_`.
pub fn storage_prefix(plugin_name: &str) -> String {
    format!("plugin_{}_", plugin_name.replace('-', "_"))
}
