//! Agents and their plugin declarations, resolved by the host (issue #6):
//! pure logic, no processes.
//!
//! * [`project`]: the project file model (`primary:` and recursive
//!   `subagents:`, each with `plugins:`, `compaction.delegate.plugin` and a
//!   `tools:` opt-out block), loaded by [`Project::from_yaml_str`] (the
//!   located-YAML loader lives in the private `load` module);
//! * [`local`]: the operator-local system config (`local.toml`'s
//!   `[plugins."<package>"]` tables, read from TOML, `${VAR}` substituted);
//! * [`catalogue`]: package name → loaded plugin manifest;
//! * [`cascade`]: the `isolation: project` cascade rules;
//! * [`config`]: project/system config validation and merge;
//! * [`tools`]: the per-agent tool registry;
//! * [`persist`]: a knob change written back into the project file;
//! * [`mod@resolve`]: the per-agent resolution rules; [`resolve()`] gives a
//!   [`Resolution`].
//!
//! Resolution never emits into an audit log by itself: it returns
//! [`HostEvent`]s the caller emits ([`Resolution::emit_into`]).
//!
//! ```
//! use kaged_host_engine::agents::{resolve, Catalogue, Project};
//! use kaged_plugin_protocol::manifest::Manifest;
//! use kaged_plugin_protocol::HookName;
//!
//! let manifest = Manifest::from_yaml_str(
//!     "name: memory-markdown\nversion: 1.0.0\nkaged_api: 1\ndescription: d\n\
//!      command: [./run]\ncapabilities: []\nhooks: [on_session_start, pre_compact]\n\
//!      tools:\n  - name: recall\n    parameters_schema: {type: object}\n",
//! ).unwrap();
//! let mut catalogue = Catalogue::new();
//! catalogue.insert("@kaged/memory-markdown", manifest);
//! let project = Project::from_yaml_str(
//!     "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-markdown\"\n",
//!     "project.yaml",
//! ).unwrap();
//! let res = resolve(&project, &catalogue).unwrap();
//! let fired = res.hooks_to_fire("primary", HookName::OnSessionStart);
//! assert_eq!(fired[0].name, "memory-markdown");
//! assert_eq!(res.agent("primary").unwrap().tools, ["memory-markdown.recall"]);
//! ```

pub mod cascade;
pub mod catalogue;
pub mod config;
pub mod error;
mod event;
mod load;
pub mod local;
pub mod persist;
pub mod project;
mod resolution;
pub mod resolve;
pub mod tools;
mod yaml;

pub use catalogue::Catalogue;
pub use config::{ConfigSide, MergedConfig};
pub use error::{ProjectError, ResolveError, ResolveErrors, ResolveWarning, SourcePos};
pub use event::HostEvent;
pub use local::SystemConfig;
pub use project::{AgentSpec, DeclaredPackage, Isolation, Located, PluginDecl, Project, PRIMARY};
pub use resolution::{ActivePlugin, AgentResolution, Resolution};
pub use resolve::resolve;
