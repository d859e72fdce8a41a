//! Health checks (`plugin-host.md` Health checks): `ping` every
//! `health_interval_sec` (scaled); an error answer, or no answer within 5 s
//! (scaled), is a failure, audited `plugin.health_fail {consecutive_failures,
//! error}` (`error` with its causes: the plugin's code and message); a
//! healthy answer resets the count. Three in a row kill the plugin the way
//! the spec's table says, SIGTERM → SIGKILL: SIGTERM to its process group,
//! `sigterm_grace` (2 s, scaled), then SIGKILL, audited `plugin.killed
//! {reason: "health_check_failed", via: "sigterm" | "sigkill"}` (see
//! [`PluginHandle::terminate`]). Restarting is the supervisor's business.

use std::sync::Weak;

use kaged_plugin_protocol::error_chain;
use serde_json::json;
use tokio::task::AbortHandle;

use super::ping_sample::PingSample;
use crate::observe::audit::AuditEvent;
use crate::plugin::handle::PluginHandle;

/// Consecutive failures that get a plugin killed.
pub const MAX_HEALTH_FAILURES: u32 = 3;

/// How many of the latest health pings a handle keeps
/// ([`PluginHandle::recent_pings`]).
pub const RECENT_PINGS: usize = 3;

/// A running health monitor; stops when dropped.
#[derive(Debug)]
pub struct HealthMonitor {
    task: AbortHandle,
}

impl Drop for HealthMonitor {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl PluginHandle {
    /// Start pinging the plugin every `health_interval` (see the module
    /// docs). The monitor holds only a weak reference: it stops when the
    /// session is dropped, when the plugin ends, or when the returned handle
    /// is dropped.
    pub fn start_health_checks(self: &std::sync::Arc<Self>) -> HealthMonitor {
        let weak: Weak<PluginHandle> = std::sync::Arc::downgrade(self);
        let interval = self.timeouts().health_interval;
        let task = tokio::spawn(async move {
            let mut failures = 0u32;
            loop {
                tokio::time::sleep(interval).await;
                let Some(s) = weak.upgrade() else { return };
                if !s.is_running() {
                    return;
                }
                let started = std::time::Instant::now();
                let answer = s.ping().await;
                s.record_ping(PingSample {
                    took: started.elapsed(),
                    budget: s.timeouts().ping,
                    ok: answer.is_ok(),
                });
                match answer {
                    Ok(()) => failures = 0,
                    Err(e) => {
                        if !s.is_running() {
                            return;
                        }
                        failures += 1;
                        tracing::warn!(plugin = s.name(), failures, error = %e, "health check failed");
                        s.audit().emit(
                            AuditEvent::HealthFail,
                            s.name(),
                            json!({"consecutive_failures": failures, "error": error_chain::chain(&e)}),
                        );
                        if failures >= MAX_HEALTH_FAILURES {
                            s.terminate("health_check_failed").await;
                            return;
                        }
                    }
                }
            }
        })
        .abort_handle();
        HealthMonitor { task }
    }

    /// The latest health pings (at most [`RECENT_PINGS`], oldest first).
    pub fn recent_pings(&self) -> Vec<PingSample> {
        self.recent_pings
            .lock()
            .map(|g| g.iter().copied().collect())
            .unwrap_or_default()
    }

    fn record_ping(&self, sample: PingSample) {
        if let Ok(mut g) = self.recent_pings.lock() {
            if g.len() == RECENT_PINGS {
                g.pop_front();
            }
            g.push_back(sample);
        }
    }
}
