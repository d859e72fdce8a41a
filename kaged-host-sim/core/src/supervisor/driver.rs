//! The driver task: launch, run, wait for the end, decide, back off, again.
//! The supervisor cancels it (aborts the task) to stop or disable.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use kaged_plugin_protocol::methods;
use serde_json::json;

use super::failures::Verdict;
use super::gate::StartRefusal;
use super::inner::{lock, Inner, Slot};
use super::PluginState;
use crate::host::LaunchError;
use crate::observe::audit::AuditEvent;
use crate::plugin::handle::{FirstConfig, PluginHandle};
use crate::plugin::handshake::HandshakeError;
use crate::time::KILL_CONFIRM_MIN;

/// How one launch attempt ended.
#[derive(Debug)]
enum Attempt {
    /// Ended unexpectedly: restart with backoff (counts as a failure).
    Failure(String),
    /// Failed in a way a restart cannot fix: mark failed now.
    Permanent {
        /// Short reason for `plugin.disabled` (`capability_overreach`).
        reason: String,
        /// Whether the host already audited `plugin.failed`.
        failed_audited: bool,
    },
    /// The manifest is invalid: disabled (already audited by the host).
    InvalidManifest,
    /// The host's own resources ran out (descriptors, memory, processes:
    /// [`SpawnError::is_host_side`](crate::plugin::spawn::SpawnError::is_host_side)):
    /// retried with backoff, not counted as a failure of the plugin.
    HostSide(String),
    /// The start gate refused it: disabled, nothing spawned.
    Refused(StartRefusal),
}

/// Drive the plugin until it is marked failed or disabled (or cancelled).
/// `cause`: the API request that asked for this start (enable, restart),
/// whose id the first launch's audit records carry (ADDENDUM §16); later
/// restarts after a failure are the supervisor's own.
pub(super) async fn drive(inner: Arc<Inner>, cause: Option<String>) {
    let mut cause = cause;
    // Host-side start failures in a row: their own backoff, never the
    // plugin's failure streak.
    let mut host_side = 0u32;
    loop {
        let ended = attempt(&inner, cause.take()).await;
        if !matches!(ended, Attempt::HostSide(_)) {
            host_side = 0;
        }
        match ended {
            Attempt::HostSide(why) => {
                host_side = host_side.saturating_add(1);
                let delay = inner.policy.backoff(host_side);
                inner.set_state(PluginState::Crashed);
                tracing::warn!(plugin = %inner.name, %why, ?delay, "cannot start the plugin for want of the host's own resources; retrying after backoff (not a failure of the plugin)");
                inner.clock.sleep(delay).await;
            }
            Attempt::Failure(why) => {
                let verdict = lock(&inner.failures).record(inner.clock.now(), &inner.policy);
                inner.set_state(PluginState::Crashed);
                match verdict {
                    Verdict::Restart(delay) => {
                        tracing::warn!(plugin = %inner.name, %why, ?delay, "plugin failed; restarting after backoff");
                        inner.clock.sleep(delay).await;
                    }
                    Verdict::GiveUp { total } => {
                        tracing::error!(plugin = %inner.name, %why, total, "too many consecutive failures; plugin failed");
                        inner.audit(
                            AuditEvent::Failed,
                            json!({"total_failures": total, "last_failure": why}),
                        );
                        inner.audit(
                            AuditEvent::Disabled,
                            json!({"reason": "consecutive_failures"}),
                        );
                        inner.set_state(PluginState::Failed);
                        return;
                    }
                }
            }
            Attempt::Permanent {
                reason,
                failed_audited,
            } => {
                tracing::error!(plugin = %inner.name, %reason, "plugin failed; not restarting");
                if !failed_audited {
                    let mut f = lock(&inner.failures);
                    f.record(inner.clock.now(), &inner.policy);
                    let total = f.consecutive();
                    drop(f);
                    inner.audit(
                        AuditEvent::Failed,
                        json!({"total_failures": total, "reason": reason}),
                    );
                }
                inner.audit(AuditEvent::Disabled, json!({"reason": reason}));
                inner.set_state(PluginState::Failed);
                return;
            }
            Attempt::InvalidManifest => {
                inner.set_state(PluginState::Disabled);
                return;
            }
            Attempt::Refused(refusal) => {
                tracing::error!(plugin = %inner.name, reason = %refusal.reason, message = %refusal.message, "plugin not started");
                if let Some(event) = refusal.event {
                    inner.audit(event, refusal.data);
                }
                inner.audit(
                    AuditEvent::Disabled,
                    json!({"reason": refusal.reason, "detail": refusal.message}),
                );
                inner.set_state(PluginState::Disabled);
                return;
            }
        }
    }
}

/// One launch: the start gate, spawn, handshake, run until the process
/// ends.
async fn attempt(inner: &Inner, cause: Option<String>) -> Attempt {
    let started = match cause {
        Some(id) => crate::audit::with_request_id(id, start(inner)).await,
        None => start(inner).await,
    };
    let plugin = match started {
        Ok(plugin) => plugin,
        Err(ended) => return ended,
    };
    wait_ended(&plugin).await;
    *lock(&inner.last_exit) = plugin.exit_info();
    // Dropping the monitor is safe now: any kill it made has finished.
    drop(inner.take_slot_of(&plugin));
    Attempt::Failure(describe_end(&plugin))
}

/// One start, up to `running`: launched, handshake and first config done,
/// `projects.activated` sent, health checks on. The records it emits are
/// the cause's, when there is one ([`attempt`]).
async fn start(inner: &Inner) -> Result<Arc<PluginHandle>, Attempt> {
    inner.set_state(PluginState::Spawning);
    if let Some(refusal) = inner.gate_refusal() {
        return Err(Attempt::Refused(refusal));
    }
    inner.spawns.fetch_add(1, Ordering::SeqCst);
    // The config in force goes first, right after `initialized` (ADDENDUM
    // §12, §15: always, the schemas' defaults when none was set).
    let first = match lock(&inner.config).clone() {
        Some(config) => FirstConfig::Given(config),
        None => FirstConfig::Defaults,
    };
    let plugin = match inner.host.launch_with(&inner.dir, &first).await {
        Ok(s) => Arc::new(s),
        Err(e) => return Err(classify(e)),
    };
    let project = lock(&inner.project).clone();
    if let Some((project, config)) = project {
        let params = json!({"project": project, "config": config});
        if let Err(e) = plugin
            .call(methods::PROJECTS_ACTIVATED, Some(params), None)
            .await
        {
            tracing::warn!(plugin = %plugin.name(), error = %e, "projects.activated was not accepted");
        }
    }
    inner.forward_notifications(&plugin);
    let monitor = plugin.start_health_checks();
    *lock(&inner.slot) = Some(Slot {
        plugin: plugin.clone(),
        monitor,
    });
    inner.set_state(PluginState::Running);
    Ok(plugin)
}

/// Which launch failures are restarted (see the module docs' table).
fn classify(e: LaunchError) -> Attempt {
    match e {
        LaunchError::InvalidManifest { .. } => Attempt::InvalidManifest,
        LaunchError::Spawn { source, .. } if source.is_host_side() => {
            Attempt::HostSide(kaged_plugin_protocol::error_chain::chain(&source))
        }
        LaunchError::Spawn { source, .. } => {
            tracing::error!(error = %source, "cannot spawn plugin");
            Attempt::Permanent {
                reason: "spawn_failed".to_string(),
                failed_audited: true,
            }
        }
        LaunchError::ExitedAtOnce { exit, .. } => Attempt::Failure(match exit {
            Some(x) => format!(
                "exited before the handshake (exit code {:?}, signal {:?})",
                x.code, x.signal
            ),
            None => "exited before the handshake".to_string(),
        }),
        LaunchError::FirstConfig { why, .. } => {
            Attempt::Failure(format!("did not survive its first config.update: {why}"))
        }
        LaunchError::Handshake { source, .. } => {
            if restartable(&source) {
                Attempt::Failure(format!("handshake failed: {source}"))
            } else {
                Attempt::Permanent {
                    reason: source.reason().to_string(),
                    failed_audited: false,
                }
            }
        }
    }
}

/// Whether a handshake failure may go away on a restart.
fn restartable(e: &HandshakeError) -> bool {
    match e {
        HandshakeError::Timeout(_)
        | HandshakeError::Exited
        | HandshakeError::ErrorAnswer(_)
        | HandshakeError::ProtocolViolation { .. } => true,
        HandshakeError::ApiMismatch { .. }
        | HandshakeError::NameMismatch { .. }
        | HandshakeError::VersionMismatch { .. }
        | HandshakeError::CapabilityOverreach { .. }
        | HandshakeError::Malformed(_) => false,
    }
}

/// Wait until the process ended and its end was audited. Should the end
/// never be marked (a kill whose caller was cancelled midway), the exit
/// plus a bound on the clean-up is taken as the end.
async fn wait_ended(plugin: &PluginHandle) {
    let life = plugin.lifecycle();
    let cleanup = plugin.timeouts().sigterm_grace * 2 + KILL_CONFIRM_MIN;
    tokio::select! {
        _ = life.wait_done() => {}
        _ = async {
            // About a century: "until it exits".
            let _ = life.wait_exit(Duration::from_secs(3_155_760_000)).await;
            tokio::time::sleep(cleanup).await;
        } => {}
    }
}

fn describe_end(plugin: &PluginHandle) -> String {
    match plugin.exit_info() {
        Some(x) => match (x.code, x.signal) {
            (Some(c), _) => format!("exited with code {c}"),
            (None, Some(s)) => format!("ended by signal {s}"),
            (None, None) => "ended".to_string(),
        },
        None => "ended".to_string(),
    }
}
