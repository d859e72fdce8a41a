//! After an upgrade, the running plugin restarts on the new copy
//! (plugin-host.md § Upgrade: "Plugin was running; restarting... ✓
//! oh-my-pi restarted").
//!
//! The store does not know which plugins run: the caller hands in the
//! supervisors it keeps (the daemon's), as [`PluginStore::uninstall`] is
//! handed the running sessions. Those that keep the upgraded plugin of this
//! store alive are stopped gracefully and started again, and the restart is
//! awaited until the new copy completed its handshake.

use kaged_host_core::{PluginState, Supervisor, SupervisorError};

use super::PluginStore;

/// How one supervised plugin came through the restart after an upgrade.
#[derive(Debug)]
pub enum UpgradeRestart {
    /// It runs the new copy: its process and the version it answered with.
    Restarted {
        /// The new process.
        pid: Option<u32>,
        /// The version of the running copy (its manifest's).
        version: String,
    },
    /// It was not running (stopped, disabled, failed): left as it was; the
    /// new copy is what it starts next time.
    NotRunning(PluginState),
    /// It could not be started again.
    Failed(SupervisorError),
    /// It was started again but did not reach `running` (it is `state` now;
    /// its audit records say why).
    NotBackUp(PluginState),
}

impl PluginStore {
    /// Restart every supervisor of `running` that keeps `name`, as
    /// installed in this store, alive: a graceful stop, then a start on the
    /// copy now in the store, awaited until it runs (or settles otherwise).
    /// Supervisors of other plugins or other directories are left alone.
    /// Call it after [`PluginStore::install`] upgraded `name`.
    pub async fn restart_upgraded(
        &self,
        name: &str,
        running: &[&Supervisor],
    ) -> Vec<UpgradeRestart> {
        let dir = self.plugin_dir(name);
        let mut out = Vec::new();
        for sup in running
            .iter()
            .filter(|s| s.name() == name && s.dir() == dir)
        {
            out.push(restart(sup).await);
        }
        out
    }
}

async fn restart(sup: &Supervisor) -> UpgradeRestart {
    let before = sup.state();
    if !matches!(
        before,
        PluginState::Running | PluginState::Spawning | PluginState::Crashed
    ) {
        return UpgradeRestart::NotRunning(before);
    }
    sup.stop().await;
    if let Err(e) = sup.start().await {
        return UpgradeRestart::Failed(e);
    }
    // Every state but spawning is settled; the supervisor's own budgets
    // (the handshake timeout, the restart policy) bound the wait.
    let mut states = sup.subscribe();
    let settled = states
        .wait_for(|s| *s != PluginState::Spawning)
        .await
        .map(|s| *s)
        .unwrap_or_else(|_| sup.state());
    match (settled, sup.current()) {
        (PluginState::Running, Some(session)) => UpgradeRestart::Restarted {
            pid: session.pid(),
            version: session.manifest().version.clone(),
        },
        (state, _) => UpgradeRestart::NotBackUp(state),
    }
}
