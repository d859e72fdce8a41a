//! Graceful shutdown (`plugin-host.md` Graceful shutdown, ADDENDUM §2):
//! `shutdown` notification, wait `shutdown_timeout_sec`, SIGTERM to the
//! process group, wait 2 s, SIGKILL (all scaled).
//!
//! | how it ended | outcome | audit |
//! |---|---|---|
//! | exit 0 in time | [`ShutdownOutcome::Exited`] | `plugin.exited {exit_code: 0}`, `plugin.stopped {via: "shutdown"}` |
//! | non-zero exit in time | [`ShutdownOutcome::ExitedWithError`] | `plugin.crashed` (not a clean exit, so not `exited`) |
//! | exit after SIGTERM | [`ShutdownOutcome::Terminated`] | `plugin.killed {reason: "shutdown_timeout", via: "sigterm", exit_code, exit_signal}` |
//! | SIGKILL needed | [`ShutdownOutcome::Killed`] | `plugin.killed {reason: "shutdown_timeout", via: "sigkill"}` |
//!
//! Only an exit after the `shutdown` notification is the clean stop,
//! `plugin.stopped`; an exit the host had to signal is `plugin.killed`
//! with the signal (ADDENDUM §16).
//!
//! In every case the whole process group is then killed and reaped.

use kaged_plugin_protocol::methods;
use rustix::process::Signal;
use serde_json::json;

use crate::observe::audit::AuditEvent;
use crate::plugin::connection::Ending;
use crate::plugin::handle::PluginHandle;
use crate::plugin::process::{audit_crash, kill_and_reap_group, signal_group, ExitInfo};

/// How [`PluginHandle::shutdown`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShutdownOutcome {
    /// Exited cleanly within `shutdown_timeout_sec`.
    Exited(ExitInfo),
    /// Exited within the timeout, but not cleanly (audited as a crash).
    ExitedWithError(ExitInfo),
    /// Needed SIGTERM.
    Terminated(ExitInfo),
    /// Needed SIGKILL.
    Killed,
    /// Had already ended (crashed or killed) before `shutdown`.
    AlreadyEnded,
}

impl ShutdownOutcome {
    /// Whether the plugin stopped on its own, cleanly.
    pub fn is_clean(&self) -> bool {
        matches!(self, ShutdownOutcome::Exited(_))
    }
}

impl std::fmt::Display for ShutdownOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let exit = |e: &ExitInfo| match (e.code, e.signal) {
            (Some(c), _) => format!("exit code {c}"),
            (None, Some(s)) => format!("signal {s}"),
            (None, None) => "closed its pipe".to_string(),
        };
        match self {
            ShutdownOutcome::Exited(e) => write!(f, "exited cleanly ({})", exit(e)),
            ShutdownOutcome::ExitedWithError(e) => write!(f, "exited with an error ({})", exit(e)),
            ShutdownOutcome::Terminated(e) => write!(f, "stopped by SIGTERM ({})", exit(e)),
            ShutdownOutcome::Killed => f.write_str("killed (SIGKILL)"),
            ShutdownOutcome::AlreadyEnded => f.write_str("had already ended"),
        }
    }
}

impl PluginHandle {
    /// Stop the plugin gracefully; see the module docs for the ladder.
    pub async fn shutdown(&self) -> ShutdownOutcome {
        let life = self.lifecycle();
        let conn = self.connection();
        match conn.transition(&[Ending::Running], Ending::ShuttingDown) {
            Ok(_) => {}
            Err(Ending::Killing) => {
                life.wait_done().await;
                return ShutdownOutcome::Killed;
            }
            Err(_) => {
                life.wait_done().await;
                return ShutdownOutcome::AlreadyEnded;
            }
        }
        // Failing to send means the plugin is already gone; the wait says so.
        let _ = conn.notify(methods::SHUTDOWN, None);
        let t = self.timeouts();
        if let Some(info) = life.wait_exit(t.shutdown).await {
            return self.finish(info, false).await;
        }
        if let Some(pid) = life.pid {
            tracing::warn!(
                plugin = self.name(),
                "no exit after shutdown; sending SIGTERM"
            );
            signal_group(pid, Signal::TERM);
            if let Some(info) = life.wait_exit(t.sigterm_grace).await {
                return self.finish(info, true).await;
            }
        }
        tracing::warn!(plugin = self.name(), "still running; sending SIGKILL");
        life.kill("shutdown_timeout").await;
        ShutdownOutcome::Killed
    }

    async fn finish(&self, info: ExitInfo, after_sigterm: bool) -> ShutdownOutcome {
        let life = self.lifecycle();
        let conn = self.connection();
        if conn
            .transition(&[Ending::ShuttingDown], Ending::Ended)
            .is_err()
        {
            // A fatal error raced us and the plugin was killed.
            life.wait_done().await;
            return ShutdownOutcome::Killed;
        }
        if let Some(pid) = life.pid {
            kill_and_reap_group(pid, self.timeouts().sigterm_grace).await;
        }
        // Everything the plugin wrote to stderr before it ended is
        // captured (and in the transcript) before the outcome is known.
        conn.wait_stderr_done(self.timeouts().sigterm_grace).await;
        let outcome = if after_sigterm {
            self.audit().emit(
                AuditEvent::Killed,
                self.name(),
                json!({
                    "reason": "shutdown_timeout",
                    "via": "sigterm",
                    "pid": self.lifecycle().pid,
                    "exit_code": info.code,
                    "exit_signal": info.signal,
                }),
            );
            ShutdownOutcome::Terminated(info)
        } else if info.is_clean() {
            self.audit().emit(
                AuditEvent::Exited,
                self.name(),
                json!({"exit_code": info.code}),
            );
            self.audit()
                .emit(AuditEvent::Stopped, self.name(), json!({"via": "shutdown"}));
            ShutdownOutcome::Exited(info)
        } else {
            audit_crash(conn, info, life.pid);
            ShutdownOutcome::ExitedWithError(info)
        };
        conn.close();
        life.mark_done();
        outcome
    }
}
