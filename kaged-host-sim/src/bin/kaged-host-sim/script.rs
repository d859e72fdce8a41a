//! `kaged-host-sim session DIR --script FILE`: a YAML scenario.
//!
//! ```yaml
//! steps:
//!   - call: good.echo                 # a call, with optional params and context
//!     params: {text: hi}
//!     context: {operator_id: operator, project_id: music, agent_path: primary,
//!               session_id: s1, request_id: r1}
//!     expect: {result: {echo: {text: hi}}}   # subset match; or {error: -32601}
//!   - notify: some.event              # a notification to the plugin
//!     params: {}
//!   - wait: echo.done                 # a notification from the plugin
//!     timeout_ms: 5000                # scaled by --time-scale; default 5000
//!   - expect_audit: plugin.notification
//!     data: {notification_type: echo.done}   # subset match, optional
//! ```
//!
//! The first line says how the plugin runs (`cage: bwrap (...)`, or
//! uncaged and why); every step prints one line; the exit status is 1 when
//! any expectation failed. A call without `expect` only has to succeed.
//!
//! With `--project`, steps are `start_session`, `idle`, `compact` and
//! `expect_audit` on agent paths instead (see the `project` module).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use kaged_plugin_protocol::{Message, Notification, PluginCallContext};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::broadcast;

use super::{one_line, CliError};
use kaged_host_sim::time::SCRIPT_WAIT_SEC;
use kaged_host_sim::{AuditEvent, HostSim, PluginSession};

/// A scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The steps, run in order.
    pub steps: Vec<Step>,
}

/// One step: exactly one of `call`, `notify`, `wait`, `expect_audit`
/// (`session DIR`), or of `start_session`, `idle`, `compact`,
/// `expect_audit` (`session --project FILE`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Call this method.
    pub call: Option<String>,
    /// Send this notification.
    pub notify: Option<String>,
    /// Wait for a notification with this name.
    pub wait: Option<String>,
    /// Expect this audit event to have been emitted.
    pub expect_audit: Option<String>,
    /// Params of `call` / `notify`.
    pub params: Option<Value>,
    /// Context of `call`.
    pub context: Option<PluginCallContext>,
    /// What `call` must produce.
    pub expect: Option<Expect>,
    /// `wait` limit in milliseconds (scaled).
    pub timeout_ms: Option<u64>,
    /// Data the `expect_audit` event must contain (subset match).
    pub data: Option<Value>,
    /// `--project`: fire `on_session_start` on this agent path.
    pub start_session: Option<String>,
    /// `--project`: fire `on_session_idle` on this agent path.
    pub idle: Option<String>,
    /// `--project`: compact this agent path's window.
    pub compact: Option<String>,
    /// `--project`: the session id (default `ses_1`).
    pub session_id: Option<String>,
    /// `idle`: the transcript.
    pub transcript: Option<Vec<Message>>,
    /// `compact`: the messages being compacted.
    pub messages_being_compacted: Option<Vec<Message>>,
    /// `compact`: the messages that stay.
    pub messages_remaining: Option<Vec<Message>>,
    /// `compact`: the configured strategy (default `drop`).
    pub strategy: Option<String>,
    /// `compact`: the trigger (default `threshold_crossed`).
    pub trigger: Option<String>,
}

/// The expected outcome of a call.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The result must contain this (subset match).
    pub result: Option<Value>,
    /// The call must fail with this code.
    pub error: Option<i64>,
}

/// Whether `actual` contains `expected`: objects by key (recursively), other
/// values by equality.
pub fn subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|av| subset(v, av))),
        _ => expected == actual,
    }
}

pub(super) async fn run(host: &HostSim, dir: &Path, script: &Path) -> Result<ExitCode, CliError> {
    let text = std::fs::read_to_string(script).map_err(|e| {
        CliError::Usage(one_line(
            &format!("cannot read script {}", script.display()),
            &e,
        ))
    })?;
    let script: Script = serde_saphyr::from_str(&text).map_err(|e| {
        CliError::Usage(one_line(
            &format!("invalid script {}", script.display()),
            &e,
        ))
    })?;
    for (i, step) in script.steps.iter().enumerate() {
        let actions = [&step.call, &step.notify, &step.wait, &step.expect_audit]
            .iter()
            .filter(|a| a.is_some())
            .count();
        let project_only = [&step.start_session, &step.idle, &step.compact]
            .iter()
            .any(|a| a.is_some());
        if actions != 1 || project_only {
            return Err(CliError::Usage(format!(
                "invalid script: step {} needs exactly one of call, notify, wait, expect_audit (start_session, idle and compact need --project)",
                i + 1
            )));
        }
    }
    let session = host.launch(dir).await.map_err(|e| {
        CliError::Failed(one_line(
            &format!("cannot start the plugin in {}", dir.display()),
            &e,
        ))
    })?;
    println!("{}", super::caging::line(&session, None));
    let mut notes = session.notifications();
    let mut failures = 0;
    for (i, step) in script.steps.iter().enumerate() {
        let (ok, line) = run_step(host, &session, &mut notes, step).await;
        println!(
            "step {}: {} {line}",
            i + 1,
            if ok { "ok  " } else { "FAIL" }
        );
        if !ok {
            failures += 1;
        }
    }
    let outcome = session.shutdown().await;
    println!("shutdown: {outcome}");
    println!("{} step(s), {failures} failed", script.steps.len());
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

async fn run_step(
    host: &HostSim,
    session: &PluginSession,
    notes: &mut broadcast::Receiver<Notification>,
    step: &Step,
) -> (bool, String) {
    if let Some(method) = &step.call {
        let r = session
            .call(method, step.params.clone(), step.context.clone())
            .await;
        let expect = step.expect.clone().unwrap_or(Expect {
            result: None,
            error: None,
        });
        return match (r, expect.error) {
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
        };
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
