//! The supervisor's states and errors.

/// The states of the spec's "Plugin states" diagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PluginState {
    /// Installed but not enabled (operator disable, invalid manifest). No process.
    Disabled,
    /// Process starting, handshake in progress.
    Spawning,
    /// Healthy, responding to calls.
    Running,
    /// Just ended unexpectedly; a restart is pending (backoff).
    Crashed,
    /// Exceeded the consecutive-failure limit, or failed in a way a restart
    /// cannot fix. Disabled until [`Supervisor::enable`](super::Supervisor::enable).
    Failed,
    /// Cleanly stopped, or never started. No process.
    Stopped,
}

impl PluginState {
    /// The state's name as the spec writes it (`running`).
    pub const fn as_str(self) -> &'static str {
        match self {
            PluginState::Disabled => "disabled",
            PluginState::Spawning => "spawning",
            PluginState::Running => "running",
            PluginState::Crashed => "crashed",
            PluginState::Failed => "failed",
            PluginState::Stopped => "stopped",
        }
    }

    /// Whether the supervisor is keeping a process alive (spawning,
    /// running, or waiting to restart).
    pub const fn is_active(self) -> bool {
        matches!(
            self,
            PluginState::Spawning | PluginState::Running | PluginState::Crashed
        )
    }
}

impl std::fmt::Display for PluginState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A supervisor operation refused in the current state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SupervisorError {
    /// The plugin is already spawning, running or restarting.
    #[error("plugin {name:?} is already {state}")]
    AlreadyActive {
        /// The plugin.
        name: String,
        /// Its state.
        state: PluginState,
    },
    /// The plugin is disabled or failed: only [`Supervisor::enable`](super::Supervisor::enable) starts it.
    #[error("plugin {name:?} is {state}; enable it first")]
    NotEnabled {
        /// The plugin.
        name: String,
        /// Its state.
        state: PluginState,
    },
}
