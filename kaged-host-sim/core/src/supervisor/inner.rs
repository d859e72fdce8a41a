//! What the supervisor and its driver task share: the running slot, the
//! state channel and the failure history.

use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};

use kaged_plugin_protocol::Notification;
use serde_json::Value;
use tokio::sync::{broadcast, watch};

use super::failures::FailureHistory;
use super::gate::{StartGate, StartRefusal};
use super::state::PluginState;
use crate::host::HostSim;
use crate::observe::audit::AuditEvent;
use crate::plugin::handle::health::HealthMonitor;
use crate::plugin::handle::PluginHandle;
use crate::plugin::process::ExitInfo;
use crate::time::clock::Clock;
use crate::time::RestartPolicy;

/// The running process and its health monitor.
pub(super) struct Slot {
    pub(super) plugin: Arc<PluginHandle>,
    pub(super) monitor: HealthMonitor,
}

/// What the supervisor and its driver task share.
pub(crate) struct Inner {
    pub(super) host: HostSim,
    pub(super) dir: PathBuf,
    pub(super) name: String,
    pub(super) policy: RestartPolicy,
    pub(super) state: watch::Sender<PluginState>,
    pub(super) slot: Mutex<Option<Slot>>,
    pub(super) failures: Mutex<FailureHistory>,
    pub(super) spawns: AtomicU64,
    /// How the last process ended (`None` before the first end).
    pub(super) last_exit: Mutex<Option<ExitInfo>>,
    /// The clock the restart policy reads and waits on.
    pub(super) clock: Clock,
    /// The config sent with `config.update` right after every handshake
    /// (ADDENDUM §12), before the process is offered to any caller.
    pub(super) config: Mutex<Option<serde_json::Map<String, Value>>>,
    /// The project every process is told about with `projects.activated
    /// {project, config}` right after its first config, before it is
    /// offered to any caller ([`super::Supervisor::set_project`]).
    pub(super) project: Mutex<Option<(String, serde_json::Map<String, Value>)>>,
    /// Every notification of every process, forwarded from each one right
    /// after its launch ([`super::Supervisor::notifications`]).
    pub(super) notifications: broadcast::Sender<Notification>,
    /// Run before every launch ([`super::Supervisor::set_start_gate`]).
    pub(super) gate: Mutex<Option<Arc<dyn StartGate>>>,
    /// The gate's last refusal; cleared when it lets a launch through.
    pub(super) refusal: Mutex<Option<StartRefusal>>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Inner {
    pub(super) fn set_state(&self, s: PluginState) {
        tracing::debug!(plugin = %self.name, state = %s, "plugin state");
        self.state.send_replace(s);
    }

    pub(super) fn audit(&self, event: AuditEvent, data: Value) {
        self.host.audit().emit(event, &self.name, data);
    }

    /// Forward `plugin`'s notifications to the supervisor's subscribers
    /// until its connection ends (a lagging forwarder skips what it missed).
    pub(super) fn forward_notifications(&self, plugin: &PluginHandle) {
        let mut rx = plugin.notifications();
        let tx = self.notifications.clone();
        tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(n) => {
                        let _ = tx.send(n);
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }

    /// Run the start gate, if any: its refusal (also kept as the last
    /// one), or `None` (the last refusal cleared).
    pub(super) fn gate_refusal(&self) -> Option<StartRefusal> {
        let gate = lock(&self.gate).clone();
        let refusal = gate.and_then(|g| g.check(&self.dir).err()).map(|r| *r);
        lock(&self.refusal).clone_from(&refusal);
        refusal
    }

    /// Take the slot, but only if it still holds `plugin`.
    pub(super) fn take_slot_of(&self, plugin: &Arc<PluginHandle>) -> Option<Slot> {
        let mut g = lock(&self.slot);
        match g.as_ref() {
            Some(s) if Arc::ptr_eq(&s.plugin, plugin) => g.take(),
            _ => None,
        }
    }
}
