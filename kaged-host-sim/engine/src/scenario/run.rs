//! Running a plugin-session script's steps against one session.

use std::time::Duration;

use futures_util::future::join_all;
use kaged_plugin_protocol::{
    parse_observer_answer, parse_session_start_answer, HookName, Notification,
};
use serde_json::Value;
use tokio::sync::broadcast;

use super::step::{CallStep, ExpectAuditStep, SessionStep, WaitStep};
use super::{subset, Script};
use kaged_host_core::audit::{AuditEvent, AuditLog};
use kaged_host_core::one_line;
use kaged_host_core::quiet::QuietWindow;
use kaged_host_core::time::SCRIPT_WAIT_SEC;
use kaged_host_core::HostSim;
use kaged_host_core::PluginHandle;

/// What one step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepOutcome {
    /// Whether it met its expectation.
    pub ok: bool,
    /// One line saying what happened (or what was expected).
    pub line: String,
}

/// Run every step of `script` against `session` of `host`, each beginning
/// a transcript step; `on_step` sees each outcome (and its index, from 1)
/// as it ends.
pub async fn run_steps(
    host: &HostSim,
    session: &PluginHandle,
    script: &Script,
    on_step: &mut dyn FnMut(usize, &StepOutcome),
) -> Vec<StepOutcome> {
    let mut notes = session.notifications();
    // What the plugin sends on `initialized` (a `CREATE TABLE`) belongs to
    // the handshake's step, whatever the machine's load: the first step
    // begins once the plugin has had its say.
    QuietWindow::for_timeouts(&session.timeouts())
        .wait(session, || false)
        .await;
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

async fn call(session: &PluginHandle, step: &CallStep) -> (bool, String) {
    let method = &step.call;
    let r = session
        .call(method, step.params.clone(), step.context.clone())
        .await;
    let expect = step.expect.clone().unwrap_or_default();
    match (r, expect.error) {
        (Ok(v), None) => match &expect.result {
            Some(want) if !subset(want, &v) => {
                (false, format!("call {method}: got {v}, expected {want}"))
            }
            _ => match malformed_hook_answer(method, step.params.as_ref(), &v) {
                Some(why) => (
                    false,
                    format!("call {method} -> {v}: a malformed hook answer the daemon treats as null ({why})"),
                ),
                None => (true, format!("call {method} -> {v}")),
            },
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

/// Why `answer` to the hook `method` is not a shape the spec allows (as
/// the agent host parses it: ADDENDUM §5-6), when `method` is a hook fired
/// on an observer. A compactor's answer (`role: compactor` in the params)
/// is judged by `compact` steps of a project script, with the messages.
fn malformed_hook_answer(method: &str, params: Option<&Value>, answer: &Value) -> Option<String> {
    let as_compactor = params.is_some_and(|p| p["role"] == "compactor");
    match HookName::from_method(method)? {
        HookName::OnSessionStart => parse_session_start_answer(answer).err(),
        HookName::PreCompact | HookName::PostCompact if !as_compactor => {
            parse_observer_answer(answer).err()
        }
        _ => None,
    }
}

async fn wait(
    host: &HostSim,
    notes: &mut broadcast::Receiver<Notification>,
    step: &WaitStep,
) -> (bool, String) {
    let name = &step.wait;
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
    match found {
        Ok(Some(n)) => (
            true,
            format!("wait {name} -> {}", n.params.unwrap_or(Value::Null)),
        ),
        _ => (false, format!("wait {name}: not received within {limit:?}")),
    }
}

/// Whether `audit` holds the event `step` expects: its line, or why not.
pub(super) fn expect_audit(audit: &AuditLog, step: &ExpectAuditStep) -> Result<String, String> {
    let name = &step.expect_audit;
    let Some(event) = AuditEvent::parse(name) else {
        return Err(format!("expect_audit {name}: no such audit event"));
    };
    let want = step
        .data
        .clone()
        .unwrap_or(Value::Object(Default::default()));
    let hit = audit
        .of(event)
        .into_iter()
        .any(|r| subset(&want, &Value::Object(r.data.clone())));
    match hit {
        true => Ok(format!("expect_audit {name}")),
        false => Err(format!("expect_audit {name}: not emitted (with {want})")),
    }
}

async fn run_step(
    host: &HostSim,
    session: &PluginHandle,
    notes: &mut broadcast::Receiver<Notification>,
    step: &SessionStep,
) -> (bool, String) {
    match step {
        SessionStep::Call(c) => call(session, c).await,
        SessionStep::Calls(c) => {
            let done = join_all(c.calls.iter().map(|c| call(session, c))).await;
            let ok = done.iter().all(|(ok, _)| *ok);
            let lines: Vec<String> = done.into_iter().map(|(_, l)| l).collect();
            (ok, format!("calls [{}]", lines.join("; ")))
        }
        SessionStep::Notify(n) => {
            let method = &n.notify;
            match session.notify(method, n.params.clone()) {
                Ok(()) => (true, format!("notify {method}")),
                Err(e) => (false, one_line(&format!("notify {method}"), &e)),
            }
        }
        SessionStep::Wait(w) => wait(host, notes, w).await,
        SessionStep::ExpectAudit(a) => match expect_audit(host.audit(), a) {
            Ok(line) => (true, line),
            Err(line) => (false, line),
        },
    }
}
