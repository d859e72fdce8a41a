//! The plugin supervisor (`plugin-host.md` Plugin supervisor, Restart
//! policy, Plugin states, Failure modes): one [`Supervisor`] keeps one
//! plugin directory alive across process lifetimes.
//!
//! A driver task launches the plugin ([`HostSim::launch`]: validate, spawn,
//! handshake), turns health checks on and waits for the process to end.
//! Every delay comes from [`RestartPolicy`] (scaled, ADDENDUM §10).
//!
//! | how an attempt ends | state | restart? | audit added by the supervisor |
//! |---|---|---|---|
//! | crash, exit on its own (even code 0: no `shutdown` was sent), health-check kill, request-timeout kill, fatal protocol violation | `crashed` | yes, after 1 s, 2 s, 4 s ... (capped at 60 s) | — (the plugin audits `plugin.crashed` / `plugin.killed`) |
//! | exit before answering `initialize`, `initialize` timeout, error answer to `initialize`, protocol violation during the handshake | `crashed` | yes, with backoff | — |
//! | the 5th consecutive failure within 10 minutes | `failed` | no | `plugin.failed {total_failures, last_failure}`, `plugin.disabled {reason: "consecutive_failures"}` |
//! | capability overreach, `api_version` / `name` / `version` mismatch, malformed `initialize` result | `failed` | no | `plugin.failed {total_failures, reason}`, `plugin.disabled {reason}` |
//! | the host's own resources ran out at the start (`EMFILE`, `ENFILE`, `ENOMEM`, `EAGAIN` reading the manifest or spawning) | `crashed` | yes, after 1 s, 2 s, 4 s ... (capped at 60 s), never counted toward the 5 failures | — (the host audited `plugin.failed {reason: "spawn failed"}`; no `plugin.disabled`: the plugin is not marked failed) |
//! | executable missing or not executable (spawn error) | `failed` | no | `plugin.disabled {reason: "spawn_failed"}` (the host audited `plugin.failed`) |
//! | invalid manifest | `disabled` | no | — (the host audited `plugin.disabled {reason: "invalid manifest"}`) |
//! | refused by the start gate ([`StartGate`], the daemon's consent check: nothing is spawned) | `disabled` | no | the refusal's record (`plugin.capability_overreach`), `plugin.disabled {reason, detail}` |
//! | [`Supervisor::stop`] (graceful ladder) | `stopped` | no, whatever the exit | — (the plugin audits `plugin.exited`/`plugin.stopped`/`plugin.killed`) |
//! | [`Supervisor::disable`] | `disabled` | no | `plugin.disabled {reason}` |
//!
//! Decisions:
//! * The handshake rows that only restate what the plugin is (identity,
//!   API version, capabilities, the shape of its answer) give the same
//!   answer on every restart, so they are not restarted (the spec says so
//!   for overreach: "Kill, do not restart"). Rows that depend on timing or
//!   on the environment (no answer in time, exiting, refusing with an error,
//!   speaking out of turn) are treated as crashes.
//! * A successful handshake does **not** reset the consecutive-failure
//!   counter: otherwise a plugin crashing a second after every handshake
//!   would restart forever. A failure more than one window (10 minutes,
//!   scaled) after the previous one starts a new streak (so 10 minutes
//!   without a failure reset the counter). [`Supervisor::enable`] and
//!   [`Supervisor::stop`] reset it too.
//! * Invalid manifests leave the plugin `disabled` (Failure modes: "Plugin
//!   disabled for this run"); other spawn-step failures leave it `failed`.
//! * Operator disable leads to `disabled`, as the diagram draws it (the
//!   state table lists it under `stopped`).
//! * A new supervisor is `stopped` (no process, not disabled); a failure
//!   before `running` (during the handshake) also passes through `crashed`.
//! * Go through [`Supervisor::stop`]: a `shutdown` sent directly on
//!   [`Supervisor::current`] cannot be told apart from the plugin exiting on
//!   its own, and is restarted.
//!
//! Dropping a supervisor stops its driver and SIGKILLs the current
//! plugin's process group (`plugin.killed {reason: "supervisor dropped"}`).

mod driver;
mod failures;
mod gate;
pub mod health;
mod inner;
mod state;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::host::HostSim;
use crate::observe::audit::AuditEvent;
use crate::plugin::connection::Ending;
use crate::plugin::handle::shutdown::ShutdownOutcome;
use crate::plugin::handle::PluginHandle;
use crate::plugin::process::ExitInfo;
use crate::time::clock::Clock;
use crate::time::{RestartPolicy, KILL_CONFIRM_MIN};
use failures::FailureHistory;
pub use gate::{StartGate, StartRefusal};
use inner::{lock, Inner};
pub use state::{PluginState, SupervisorError};

/// Supervises one plugin directory; see the module docs.
pub struct Supervisor {
    inner: Arc<Inner>,
    ops: tokio::sync::Mutex<()>,
    driver: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("name", &self.inner.name)
            .field("dir", &self.inner.dir)
            .field("state", &self.state())
            .finish_non_exhaustive()
    }
}

impl Supervisor {
    /// A supervisor for the plugin in `dir`, launched by `host`; `stopped`
    /// until [`Supervisor::start`]. The plugin's name is read from its
    /// manifest (the directory name when the manifest cannot be read).
    pub fn new(host: HostSim, dir: impl Into<PathBuf>) -> Supervisor {
        Supervisor::with_clock(host, dir, Clock::Real)
    }

    /// [`Supervisor::new`] whose restart policy reads `clock` (a
    /// [`ManualClock`](crate::time::clock::ManualClock) in tests: the
    /// backoff waits only as long as the test advances it).
    pub fn with_clock(host: HostSim, dir: impl Into<PathBuf>, clock: Clock) -> Supervisor {
        let dir = dir.into();
        let name = crate::validate::validate_dir(&dir).manifest.map_or_else(
            || {
                dir.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            },
            |m| m.name,
        );
        let policy = RestartPolicy::new(host.config().time_scale);
        Supervisor {
            inner: Arc::new(Inner {
                host,
                dir,
                name,
                policy,
                state: watch::channel(PluginState::Stopped).0,
                slot: Mutex::new(None),
                failures: Mutex::new(FailureHistory::default()),
                spawns: AtomicU64::new(0),
                last_exit: Mutex::new(None),
                clock,
                config: Mutex::new(None),
                project: Mutex::new(None),
                notifications: tokio::sync::broadcast::channel(crate::bounds::FANOUT_QUEUE).0,
                gate: Mutex::new(None),
                refusal: Mutex::new(None),
            }),
            ops: tokio::sync::Mutex::new(()),
            driver: Mutex::new(None),
        }
    }

    /// Every notification the plugin emits from now on, from every process
    /// the supervisor starts (after the rate limit): a subscription that
    /// outlives restarts. A subscriber more than
    /// [`FANOUT_QUEUE`](crate::bounds::FANOUT_QUEUE) behind misses the
    /// oldest (`Lagged`).
    pub fn notifications(
        &self,
    ) -> tokio::sync::broadcast::Receiver<kaged_plugin_protocol::Notification> {
        self.inner.notifications.subscribe()
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The plugin directory.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The effective (scaled) restart policy.
    pub fn policy(&self) -> RestartPolicy {
        self.inner.policy
    }

    /// The current state.
    pub fn state(&self) -> PluginState {
        *self.inner.state.borrow()
    }

    /// Every state change from now on (and the current state).
    pub fn subscribe(&self) -> watch::Receiver<PluginState> {
        self.inner.state.subscribe()
    }

    /// The plugin of the current process while one is running (a new one
    /// after every restart).
    pub fn current(&self) -> Option<Arc<PluginHandle>> {
        lock(&self.inner.slot).as_ref().map(|s| s.plugin.clone())
    }

    /// Failures in the current streak of consecutive failures.
    pub fn consecutive_failures(&self) -> u32 {
        lock(&self.inner.failures).consecutive()
    }

    /// The plugin's health: `ok`, `degraded` or `failed` and why (see
    /// [`health`]).
    pub fn health(&self) -> health::HealthReport {
        let pings = self.current().map(|s| s.recent_pings()).unwrap_or_default();
        let window = self.policy().window;
        let failures = lock(&self.inner.failures).within(self.inner.clock.now(), window);
        health::assess(self.state(), &pings, failures, window)
    }

    /// How many processes the supervisor has tried to start so far.
    pub fn spawn_attempts(&self) -> u64 {
        self.inner.spawns.load(Ordering::SeqCst)
    }

    /// How the last process ended (exit code or signal); `None` before
    /// the first process ended.
    pub fn last_exit(&self) -> Option<ExitInfo> {
        *lock(&self.inner.last_exit)
    }

    /// Set the config every new process gets with `config.update` right
    /// after its handshake, over the schemas' defaults (`None`: the
    /// defaults alone, `{}` without any). The running process is
    /// not sent it: that is the caller's `config.update`.
    pub fn set_config(&self, config: Option<serde_json::Map<String, serde_json::Value>>) {
        *lock(&self.inner.config) = config;
    }

    /// Tell every new process (the first and each restart) that `project`
    /// uses it: `projects.activated {project, config}` (plugin-host.md §
    /// System methods: "a project that uses this plugin has been loaded or
    /// reloaded"), right after its first `config.update`, before any
    /// caller gets it. An error answer is logged; the plugin runs on.
    pub fn set_project(
        &self,
        project: Option<(String, serde_json::Map<String, serde_json::Value>)>,
    ) {
        *lock(&self.inner.project) = project;
    }

    /// The project set with [`Supervisor::set_project`], by its id.
    pub fn project(&self) -> Option<String> {
        lock(&self.inner.project).as_ref().map(|(id, _)| id.clone())
    }

    /// The config set with [`Supervisor::set_config`].
    pub fn config(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        lock(&self.inner.config).clone()
    }

    /// Check `gate` before every launch from now on (the first start and
    /// every restart): a refusal leaves the plugin `disabled`, audited
    /// (see [`StartGate`]).
    pub fn set_start_gate(&self, gate: Arc<dyn StartGate>) {
        *lock(&self.inner.gate) = Some(gate);
    }

    /// Why the start gate refused the last launch, while it stands (the
    /// next launch the gate lets through clears it).
    pub fn refusal(&self) -> Option<StartRefusal> {
        lock(&self.inner.refusal).clone()
    }

    /// Start the plugin (daemon startup): `spawning`, then `running` with
    /// health checks on. Returns at once; watch [`Supervisor::subscribe`].
    /// Only from `stopped`.
    pub async fn start(&self) -> Result<(), SupervisorError> {
        let _op = self.ops.lock().await;
        match self.state() {
            PluginState::Stopped => {}
            state @ (PluginState::Disabled | PluginState::Failed) => {
                return Err(SupervisorError::NotEnabled {
                    name: self.inner.name.clone(),
                    state,
                })
            }
            state => {
                return Err(SupervisorError::AlreadyActive {
                    name: self.inner.name.clone(),
                    state,
                })
            }
        }
        self.launch_driver();
        Ok(())
    }

    /// Stop the plugin for good (daemon shutdown): the graceful ladder
    /// (`shutdown`, SIGTERM, SIGKILL; [`PluginHandle::shutdown`]), then
    /// `stopped`; never restarted. A pending restart is cancelled. A
    /// `failed` or `disabled` plugin keeps its state. Returns how the
    /// process ended, `None` when none was running.
    pub async fn stop(&self) -> Option<ShutdownOutcome> {
        let _op = self.ops.lock().await;
        let outcome = self.halt().await;
        if !matches!(self.state(), PluginState::Failed | PluginState::Disabled) {
            lock(&self.inner.failures).reset();
            self.inner.set_state(PluginState::Stopped);
        }
        outcome
    }

    /// Operator disable: stop like [`Supervisor::stop`], audit
    /// `plugin.disabled {reason}`, state `disabled`. Does nothing (and
    /// returns `None`) when already disabled.
    pub async fn disable(&self, reason: &str) -> Option<ShutdownOutcome> {
        let _op = self.ops.lock().await;
        if self.state() == PluginState::Disabled {
            return None;
        }
        let outcome = self.halt().await;
        self.inner
            .audit(AuditEvent::Disabled, json!({"reason": reason}));
        self.inner.set_state(PluginState::Disabled);
        outcome
    }

    /// Operator re-enable (`kaged plugin enable`): reset the failure
    /// counter, audit `plugin.enabled`, spawn afresh. From `disabled`,
    /// `failed` or `stopped`.
    pub async fn enable(&self) -> Result<(), SupervisorError> {
        let _op = self.ops.lock().await;
        let state = self.state();
        if state.is_active() {
            return Err(SupervisorError::AlreadyActive {
                name: self.inner.name.clone(),
                state,
            });
        }
        // Nothing runs in these states; this only collects a finished driver.
        self.halt().await;
        lock(&self.inner.failures).reset();
        self.inner.audit(AuditEvent::Enabled, json!({}));
        self.launch_driver();
        Ok(())
    }

    fn launch_driver(&self) {
        self.inner.set_state(PluginState::Spawning);
        // The request that asked for this start (an API enable or
        // restart), if any: the new process's records carry its id.
        let cause = crate::audit::current_request_id();
        let task = tokio::spawn(driver::drive(self.inner.clone(), cause));
        if let Some(old) = lock(&self.driver).replace(task) {
            old.abort();
        }
    }

    /// Cancel the driver (a pending restart or a launch in progress: the
    /// half-started process is killed) and shut the running process down.
    async fn halt(&self) -> Option<ShutdownOutcome> {
        let task = lock(&self.driver).take();
        if let Some(task) = task {
            task.abort();
            // Cancelled or finished: either way the driver is gone.
            let _ = task.await;
        }
        let slot = lock(&self.inner.slot).take()?;
        // The monitor stays alive until the end: dropping it in the middle
        // of a health kill would leave the kill unfinished.
        let outcome = shutdown_bounded(&self.inner, &slot.plugin).await;
        *lock(&self.inner.last_exit) = slot.plugin.exit_info();
        drop(slot.monitor);
        Some(outcome)
    }
}

/// [`PluginHandle::shutdown`], bounded by its own ladder's worst case:
/// should it still not be done (a kill or shutdown elsewhere was cancelled
/// midway and will never finish), SIGKILL the group now.
async fn shutdown_bounded(inner: &Inner, plugin: &PluginHandle) -> ShutdownOutcome {
    let t = plugin.timeouts();
    let bound = t.shutdown + t.sigterm_grace * 4 + KILL_CONFIRM_MIN * 2;
    if let Ok(outcome) = tokio::time::timeout(bound, plugin.shutdown()).await {
        return outcome;
    }
    tracing::error!(plugin = %inner.name, "shutdown did not finish; killing the group");
    force_kill(inner, plugin, "shutdown_stuck", true);
    plugin.lifecycle().mark_done();
    ShutdownOutcome::Killed
}

/// SIGKILL the group now, without waiting; audit `plugin.killed {reason}`
/// unless the plugin had already ended (or, without `stalled`, was being
/// killed by someone else, who audits).
fn force_kill(inner: &Inner, plugin: &PluginHandle, reason: &str, stalled: bool) {
    let conn = plugin.connection();
    let life = plugin.lifecycle();
    let audit = || {
        inner.audit(
            AuditEvent::Killed,
            json!({"reason": reason, "pid": plugin.pid()}),
        )
    };
    match conn.transition(&[Ending::Running, Ending::ShuttingDown], Ending::Ended) {
        Ok(_) => {
            conn.claim_kill();
            life.kill_now();
            audit();
        }
        Err(Ending::Killing) => {
            life.kill_now();
            conn.transition(&[Ending::Killing], Ending::Ended).ok();
            if stalled {
                audit();
            }
        }
        Err(_) => {}
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.driver).take() {
            task.abort();
        }
        let Some(slot) = lock(&self.inner.slot).take() else {
            return;
        };
        // A kill the monitor had in progress is cut short here; the
        // forced kill below finishes it.
        drop(slot.monitor);
        force_kill(&self.inner, &slot.plugin, "supervisor dropped", false);
    }
}
