//! One running plugin, as the host sees it: [`call`]ing it, its
//! [`health`] checks and its graceful [`shutdown`].

pub mod call;
pub mod first_config;
pub mod health;
mod ping_sample;
mod run_ids;
pub mod shutdown;

pub use call::CallError;
pub use first_config::{FirstConfig, FirstConfigSent};
pub use health::HealthMonitor;
pub use ping_sample::PingSample;
pub use run_ids::RequestIds;
pub use shutdown::ShutdownOutcome;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::{InitializeParams, Notification};
use serde_json::{json, Value};
use tokio::sync::broadcast;
use tokio::task::AbortHandle;

use crate::cage::CageStatus;
use crate::observe::audit::{AuditEvent, AuditLog};
use crate::plugin::connection::{Connection, Ending, Phase, RequestError};
use crate::plugin::handshake::{self, HandshakeError, HandshakeInfo};
use crate::plugin::process::{ExitInfo, Lifecycle};
use crate::time::Timeouts;

/// A plugin started by [`HostSim`](crate::HostSim): call it, notify it, watch
/// its notifications, shut it down. Dropping a session kills the plugin's
/// whole process group.
#[derive(Debug)]
pub struct PluginHandle {
    manifest: Arc<Manifest>,
    dir: PathBuf,
    life: Arc<Lifecycle>,
    audit: AuditLog,
    init_params: InitializeParams,
    info: Mutex<Option<HandshakeInfo>>,
    first_config: Mutex<Option<FirstConfigSent>>,
    hook_lock: tokio::sync::Mutex<()>,
    request_ids: RequestIds,
    /// The latest health pings ([`PluginHandle::recent_pings`]).
    recent_pings: Mutex<std::collections::VecDeque<PingSample>>,
    guardian: AbortHandle,
}

/// A raw line channel to the plugin, for conformance tests: bypasses every
/// host-side check.
#[derive(Debug, Clone)]
pub struct RawChannel {
    conn: Connection,
}

impl RawChannel {
    /// Send `line` verbatim (a `\n` is appended when missing). Answers to
    /// requests sent this way are delivered to [`RawChannel::inbound`] only.
    /// Sending `initialize` / `initialized` advances the handshake phase.
    pub fn send_line(&self, line: &[u8]) -> bool {
        self.conn.send_raw(line)
    }

    /// Send a JSON value as one line.
    pub fn send_value(&self, v: &Value) -> bool {
        self.conn.send_raw(v.to_string().as_bytes())
    }

    /// Every stdout line from now on (JSON, or the raw text as a string).
    pub fn inbound(&self) -> broadcast::Receiver<Value> {
        self.conn.inbound()
    }

    /// Whether a request with id `id` was sent to the plugin (by the host,
    /// or on this raw channel): an answer with any other id answers
    /// nothing.
    pub fn was_sent(&self, id: &Value) -> bool {
        self.conn.was_sent(id)
    }

    /// Send a request with the next host id, skipping every check, and wait
    /// up to `timeout` for its answer (`initialize` advances the phase).
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: std::time::Duration,
    ) -> Result<Value, RequestError> {
        self.conn.advance_phase_for(method);
        self.conn.request(method, params, timeout).await
    }
}

impl PluginHandle {
    pub(crate) fn new(
        manifest: Arc<Manifest>,
        dir: &Path,
        life: Lifecycle,
        audit: AuditLog,
        init_params: InitializeParams,
        request_ids: RequestIds,
    ) -> PluginHandle {
        let life = Arc::new(life);
        let guard = life.clone();
        let guardian = tokio::spawn(async move {
            let fatal = guard.conn.wait_fatal().await;
            guard.kill(&fatal.reason).await;
        })
        .abort_handle();
        PluginHandle {
            manifest,
            dir: dir.to_path_buf(),
            life,
            audit,
            init_params,
            info: Mutex::new(None),
            first_config: Mutex::new(None),
            hook_lock: tokio::sync::Mutex::new(()),
            request_ids,
            recent_pings: Mutex::new(std::collections::VecDeque::new()),
            guardian,
        }
    }

    /// Run the handshake (done by `launch`/`connect`; lenient sessions call
    /// it themselves). On failure the plugin is killed (`plugin.killed`),
    /// except when it already exited (`plugin.crashed`).
    pub async fn handshake(&self) -> Result<HandshakeInfo, HandshakeError> {
        let r = handshake::run(
            self.connection(),
            &self.manifest,
            self.init_params.clone(),
            self.timeouts().initialize,
        )
        .await;
        match r {
            Ok(info) => {
                *self.info.lock().unwrap_or_else(|p| p.into_inner()) = Some(info.clone());
                Ok(info)
            }
            Err(HandshakeError::Exited) => {
                if self
                    .life
                    .wait_exit(self.timeouts().sigterm_grace)
                    .await
                    .is_some()
                {
                    self.life.wait_done().await;
                } else {
                    self.kill("exited").await;
                }
                Err(HandshakeError::Exited)
            }
            Err(e) => {
                self.kill(e.reason()).await;
                Err(e)
            }
        }
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    /// The plugin directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The process group id: the plugin's pid when uncaged (it leads its
    /// group); caged, the pid of the cage's first process (bwrap's init,
    /// which leads the group of the plugin and its children). `None`
    /// in-process.
    pub fn pid(&self) -> Option<u32> {
        self.life.pid
    }

    /// The plugin process itself: [`Self::pid`] uncaged; caged, the child
    /// of the cage's init (`None` once it is gone, or in-process).
    pub fn plugin_pid(&self) -> Option<u32> {
        let pid = self.life.pid?;
        if self.caged() {
            crate::plugin::probe::children(pid).into_iter().next()
        } else {
            Some(pid)
        }
    }

    /// How the plugin runs: caged in bwrap, or uncaged and why (`None` for
    /// an in-process peer, which has no process to cage).
    pub fn cage(&self) -> Option<&CageStatus> {
        self.life.cage.as_ref()
    }

    /// Whether the plugin runs inside bwrap.
    pub fn caged(&self) -> bool {
        self.cage().is_some_and(CageStatus::is_caged)
    }

    /// The effective timeouts.
    pub fn timeouts(&self) -> Timeouts {
        self.life.timeouts
    }

    /// The audit log.
    pub fn audit(&self) -> &AuditLog {
        &self.audit
    }

    /// What the handshake established, once it succeeded.
    pub fn handshake_info(&self) -> Option<HandshakeInfo> {
        self.info.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether the handshake left `method` unavailable (declared, not
    /// listed), without copying the handshake's answer: every call asks.
    pub(crate) fn is_unavailable(&self, method: &str) -> bool {
        self.info
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|info| info.unavailable_methods.iter().any(|m| m == method))
    }

    /// The handshake phase of the connection.
    pub fn phase(&self) -> Phase {
        self.connection().phase()
    }

    /// Whether the plugin has not ended (not crashed, killed or stopped).
    pub fn is_running(&self) -> bool {
        matches!(self.connection().ending(), Ending::Running)
    }

    /// How the plugin exited, once it did.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.life.exit_info()
    }

    /// Wait up to `limit` for the plugin to exit and its end to be audited.
    pub async fn wait_exit(&self, limit: std::time::Duration) -> Option<ExitInfo> {
        let info = self.life.wait_exit(limit).await?;
        let _ = tokio::time::timeout(limit, self.life.wait_done()).await;
        Some(info)
    }

    /// The last (up to 50) stderr lines.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.connection().stderr_tail()
    }

    /// Send a notification to the plugin.
    pub fn notify(&self, method: &str, params: Option<Value>) -> Result<(), RequestError> {
        self.connection().notify(method, params)
    }

    /// Every notification the plugin emits from now on (after rate limiting).
    pub fn notifications(&self) -> broadcast::Receiver<Notification> {
        self.connection().notifications()
    }

    /// Whether everything the plugin has written to stdout so far was read
    /// and handled by the host (every line delivered to the
    /// [`RawChannel::inbound`] subscribers): nothing waits in the pipe, in
    /// the reader's buffer or as a line without its newline. A plugin that
    /// sits idle and is settled has said all it will say until spoken to.
    pub fn output_settled(&self) -> bool {
        self.connection().output_settled()
    }

    /// The raw escape hatch.
    pub fn raw(&self) -> RawChannel {
        RawChannel {
            conn: self.connection().clone(),
        }
    }

    /// Kill the plugin now (audits `plugin.killed {reason}`).
    pub async fn kill(&self, reason: &str) {
        self.life.kill(reason).await
    }

    /// Kill the plugin with SIGTERM first: SIGTERM to its process group,
    /// wait `sigterm_grace`, then SIGKILL if it is still there (audits
    /// `plugin.killed {reason, via}`, `via` being `"sigterm"` or `"sigkill"`
    /// by what ended the process). Used for the health-check kill.
    pub async fn terminate(&self, reason: &str) {
        self.life.terminate(reason).await
    }

    /// Close the plugin's stdin (end of input) without sending `shutdown`;
    /// a conforming plugin exits (ADDENDUM §2). Returns false when the
    /// connection is already closed.
    pub fn close_stdin(&self) -> bool {
        self.connection().close_stdin()
    }

    pub(crate) fn connection(&self) -> &Connection {
        &self.life.conn
    }

    pub(crate) fn lifecycle(&self) -> &Lifecycle {
        &self.life
    }

    pub(crate) fn hook_lock(&self) -> &tokio::sync::Mutex<()> {
        &self.hook_lock
    }

    /// A fresh `_context.request_id` for a call this host makes on its own
    /// (hooks, knob writes): `req_<plugin>_<n>`, `n` from the run's
    /// sequence ([`HostConfig::request_ids`](crate::HostConfig)): unique
    /// within the run, across the plugin's restarts (ADDENDUM §16).
    pub fn next_request_id(&self) -> String {
        format!("req_{}_{}", self.name(), self.request_ids.next())
    }
}

impl Drop for PluginHandle {
    fn drop(&mut self) {
        self.guardian.abort();
        let conn = self.connection();
        match conn.transition(&[Ending::Running, Ending::ShuttingDown], Ending::Ended) {
            Ok(_) => {
                conn.claim_kill();
                self.life.kill_now();
                self.audit.emit(
                    AuditEvent::Killed,
                    self.name(),
                    json!({"reason": "session dropped", "pid": self.life.pid}),
                );
            }
            // A kill in progress may have been cut short with the guardian.
            Err(Ending::Killing) => self.life.kill_now(),
            Err(_) => {}
        }
    }
}
