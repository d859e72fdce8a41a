//! Running a plugin-session script's steps against one session.

use std::time::Duration;

use futures_util::future::join_all;
use kaged_plugin_protocol::Notification;
use serde_json::Value;
use tokio::sync::broadcast;

use super::{subset, Script, Step};
use kaged_host_core::audit::AuditEvent;
use kaged_host_core::one_line;
use kaged_host_core::time::SCRIPT_WAIT_SEC;
use kaged_host_core::HostSim;
use kaged_host_core::PluginSession;

/// What one step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepOutcome {
    /// Whether it met its expectation.
    pub ok: bool,
    /// One line saying what happened (or what was expected).
    pub line: String,
}

/// Run every step of `script` (checked with
/// [`Script::check_session_steps`]) against `session` of `host`, each
/// beginning a transcript step; `on_step` sees each outcome as it ends.
pub async fn run_steps(
    host: &HostSim,
    session: &PluginSession,
    script: &Script,
    on_step: &mut dyn FnMut(usize, &StepOutcome),
) -> Vec<StepOutcome> {
    let mut notes = session.notifications();
    let mut out = Vec::new();
    for (i, step) in script.steps.iter().enumerate() {
        host.config().transcript.mark_step();
        let (ok, line) = run_step(host, session, &mut notes, step).await;
        let outcome = StepOutcome { ok, line };
        on_step(i + 1, &outcome);
        out.push(outcome);
    }
    // The shutdown that follows is a step of its own.
    host.config().transcript.mark_step();
    out
}

async fn call(session: &PluginSession, step: &Step, method: &str) -> (bool, String) {
    let r = session
        .call(method, step.params.clone(), step.context.clone())
        .await;
    let expect = step.expect.clone().unwrap_or_default();
    match (r, expect.error) {
        (Ok(v), None) => match &expect.result {
            Some(want) if !subset(want, &v) => {
                (false, format!("call {method}: got {v}, expected {want}"))
            }
            _ => (true, format!("call {method} -> {v}")),
        },
        (Ok(v), Some(code)) => (
            false,
            format!("call {method}: got {v}, expected error {code}"),
        ),
        (Err(e), Some(code)) if e.code() == code => {
            (true, format!("call {method} -> error {code}"))
        }
        (Err(e), _) => (false, one_line(&format!("call {method}"), &e)),
    }
}

async fn run_step(
    host: &HostSim,
    session: &PluginSession,
    notes: &mut broadcast::Receiver<Notification>,
    step: &Step,
) -> (bool, String) {
    if let Some(method) = &step.call {
        return call(session, step, method).await;
    }
    if let Some(calls) = &step.calls {
        let runs = calls.iter().map(|c| async move {
            match &c.call {
                Some(m) => call(session, c, m).await,
                None => (false, "a `calls` entry needs `call`".to_string()),
            }
        });
        let done = join_all(runs).await;
        let ok = done.iter().all(|(ok, _)| *ok);
        let lines: Vec<String> = done.into_iter().map(|(_, l)| l).collect();
        return (ok, format!("calls [{}]", lines.join("; ")));
    }
    if let Some(method) = &step.notify {
        return match session.notify(method, step.params.clone()) {
            Ok(()) => (true, format!("notify {method}")),
            Err(e) => (false, one_line(&format!("notify {method}"), &e)),
        };
    }
    if let Some(name) = &step.wait {
        let ms = step.timeout_ms.unwrap_or(SCRIPT_WAIT_SEC * 1000);
        let limit = host.config().time_scale.apply(Duration::from_millis(ms));
        let found = tokio::time::timeout(limit, async {
            loop {
                match notes.recv().await {
                    Ok(n) if &n.method == name => return Some(n),
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .await;
        return match found {
            Ok(Some(n)) => (
                true,
                format!("wait {name} -> {}", n.params.unwrap_or(Value::Null)),
            ),
            _ => (false, format!("wait {name}: not received within {limit:?}")),
        };
    }
    if let Some(name) = &step.expect_audit {
        let Some(event) = AuditEvent::parse(name) else {
            return (false, format!("expect_audit {name}: no such audit event"));
        };
        let want = step
            .data
            .clone()
            .unwrap_or(Value::Object(Default::default()));
        let hit = host
            .audit()
            .of(event)
            .into_iter()
            .any(|r| subset(&want, &Value::Object(r.data.clone())));
        return match hit {
            true => (true, format!("expect_audit {name}")),
            false => (
                false,
                format!("expect_audit {name}: not emitted (with {want})"),
            ),
        };
    }
    (false, "empty step".to_string())
}
