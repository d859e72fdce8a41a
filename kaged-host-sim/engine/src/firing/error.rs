//! Why an [`AgentHost`](super::AgentHost) could not start or run an operation.

use std::path::PathBuf;

use kaged_plugin_protocol::manifest::ManifestError;

use crate::agents::{ProjectError, ResolveErrors};

/// Why an [`AgentHost`](super::AgentHost) could not start or run an operation.
#[derive(Debug, thiserror::Error)]
pub enum AgentHostError {
    /// The project file (or the system config file) could not be loaded.
    #[error("cannot load the project")]
    Project(#[source] ProjectError),
    /// The system config file could not be loaded.
    #[error("cannot load the system config")]
    SystemConfig(#[source] ProjectError),
    /// A plugin directory could not be read.
    #[error("cannot load plugin directory {path}")]
    PluginDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: ManifestError,
    },
    /// The project does not resolve (its events were emitted).
    #[error("the project does not resolve:\n{0}")]
    Resolve(#[source] ResolveErrors),
    /// An active plugin has no directory to launch it from.
    #[error("no plugin directory for package {package:?} (plugin {name:?})")]
    NoPluginDir {
        /// The declared package.
        package: String,
        /// The plugin name.
        name: String,
    },
    /// The agent path is not part of the resolved project.
    #[error("unknown agent path {0:?}")]
    UnknownAgent(String),
}
