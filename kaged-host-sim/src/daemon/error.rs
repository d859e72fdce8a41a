//! Why a daemon operation was refused.

use std::path::PathBuf;

use kaged_host_core::CallError;
use kaged_host_core::SupervisorError;
use kaged_host_engine::{InstallError, KnobWriteError};

/// Why a daemon operation was refused (the API maps each to a status).
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The plugin store could not be read.
    #[error("cannot read the plugin store {}", root.display())]
    Store {
        /// The store root.
        root: PathBuf,
        /// The cause.
        #[source]
        source: InstallError,
    },
    /// The `--plugins` directory could not be read.
    #[error("cannot read the plugins directory {}", dir.display())]
    PluginsDir {
        /// The directory.
        dir: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// No plugin of that name is known to the daemon.
    #[error("no plugin named {0:?}")]
    UnknownPlugin(String),
    /// The plugin has no running process to answer.
    #[error("plugin {name:?} is {state}, not running")]
    NotRunning {
        /// The plugin.
        name: String,
        /// Its state.
        state: String,
    },
    /// The plugin's manifest could not be read (the plugin is disabled).
    #[error("plugin {name:?} has no readable manifest")]
    NoManifest {
        /// The plugin.
        name: String,
    },
    /// The plugin may not start: a grant of it lies inside another
    /// plugin's writable grant (ADDENDUM §16; `daemon::overlap`).
    #[error("plugin {name:?} may not start: {why}")]
    NestedGrant {
        /// The plugin.
        name: String,
        /// Which grants, and what the operator does.
        why: String,
    },
    /// The supervisor refused the operation in the plugin's state.
    #[error(transparent)]
    Supervisor(#[from] SupervisorError),
    /// The call failed (the plugin's error answer, a timeout, ...).
    #[error("call failed")]
    Call(#[source] CallError),
    /// The project file could not be loaded or resolved.
    #[error("project {}", file.display())]
    Project {
        /// The project file.
        file: PathBuf,
        /// Why (a load error or the resolution's errors).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The project has no such agent.
    #[error("the project has no agent {agent:?} (agents: {known})")]
    UnknownAgent {
        /// The agent path asked for.
        agent: String,
        /// The project's agent paths.
        known: String,
    },
    /// The plugin is not active on the agent.
    #[error("plugin {plugin:?} is not active on agent {agent:?}")]
    NotActive {
        /// The agent path.
        agent: String,
        /// The plugin.
        plugin: String,
    },
    /// The plugin refused the agent's config, sent before the call.
    #[error("plugin {plugin:?} refused the config of agent {agent:?}")]
    ConfigRefused {
        /// The plugin.
        plugin: String,
        /// The agent path (`None`: the daemon-level config).
        agent: Option<String>,
        /// The plugin's answer.
        #[source]
        source: Box<CallError>,
    },
    /// `?agent=PATH` was given but the daemon runs no project.
    #[error("agent {0:?}: no project is loaded (agent contexts need --project)")]
    NoProject(String),
    /// A knob write was refused (no such knob, a value out of bounds, a
    /// config that would not validate: nothing was sent) or the plugin
    /// refused the `config.update` (the old config stays).
    #[error(transparent)]
    Knob(#[from] KnobWriteError),
    /// A knob write for an agent reached the plugin (the value is in force)
    /// but could not be written into the project file.
    #[error("the knob is in force but the project file was not updated")]
    ProjectNotSaved(#[source] kaged_host_engine::agents::persist::PersistError),
}
