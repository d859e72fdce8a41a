//! Running a project script's steps against a whole project through an
//! [`AgentHost`], as `kaged-host-sim session --project FILE --script FILE`
//! runs them.

use serde_json::{json, Value};

use super::run::expect_audit;
use super::step::{CompactStep, ProjectExpect, ProjectStep};
use super::{subset, ProjectScript};
use crate::{AgentHost, AgentHostError, CompactRequest};
use kaged_host_core::one_line;
use kaged_host_core::AuditEvent;

/// The session id of project steps without `session_id`.
pub const DEFAULT_SESSION: &str = "ses_1";

/// What one project step did.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectOutcome {
    /// The step's JSON outcome: the hook's outcome (`to_json`) with
    /// `step` and `agent_path`, `{"step": "expect_audit", "event": ...}`,
    /// or `{"step": "error", "error": ...}`.
    pub value: Value,
    /// Why it failed, when it did.
    pub failure: Option<String>,
}

impl ProjectOutcome {
    /// Whether it met its expectation.
    pub fn ok(&self) -> bool {
        self.failure.is_none()
    }

    /// One line: why it failed, or what it did.
    pub fn line(&self) -> String {
        self.failure
            .clone()
            .unwrap_or_else(|| describe(&self.value))
    }

    /// The JSON outcome with `index` (from 1), `ok` and `failure`.
    pub fn to_json(&self, index: usize) -> Value {
        let mut v = self.value.clone();
        v["index"] = json!(index);
        v["ok"] = json!(self.ok());
        v["failure"] = json!(self.failure);
        v
    }
}

/// Run every step of `script` against `agents`, each beginning a
/// transcript step (and the shutdown that follows one more); `on_step`
/// sees each outcome (and its index, from 1) as it ends.
pub async fn run_project_steps(
    agents: &AgentHost,
    script: &ProjectScript,
    on_step: &mut dyn FnMut(usize, &ProjectOutcome),
) -> Vec<ProjectOutcome> {
    let mut out = Vec::new();
    for (i, step) in script.steps.iter().enumerate() {
        agents.host().config().transcript.mark_step();
        let outcome = run_step(agents, step).await;
        on_step(i + 1, &outcome);
        out.push(outcome);
    }
    // The shutdown that follows is a step of its own.
    agents.host().config().transcript.mark_step();
    out
}

/// One human line for a successful step's JSON outcome.
fn describe(v: &Value) -> String {
    let path = v["agent_path"].as_str().unwrap_or_default();
    let len = |k: &str| v[k].as_array().map_or(0, Vec::len);
    match v["step"].as_str().unwrap_or_default() {
        "start_session" => format!(
            "start_session {path} -> {} inject(s): {}",
            len("injects"),
            v["system_prompt_prefix"]
        ),
        "idle" => format!("idle {path} -> fired {}", v["fired"]),
        "compact" => format!(
            "compact {path} -> {} message(s), superseded {}, applied {}, fallback {}, {} retained, {} inject(s)",
            len("messages"),
            v["superseded"],
            v["applied"].as_str().unwrap_or_default(),
            v["fallback"],
            len("retained"),
            len("injects")
        ),
        other => format!("{other} {}", v["event"].as_str().unwrap_or_default()),
    }
}

fn session_of(id: &Option<String>) -> &str {
    id.as_deref().unwrap_or(DEFAULT_SESSION)
}

async fn compact(agents: &AgentHost, step: &CompactStep) -> Result<Value, AgentHostError> {
    let mut req = CompactRequest::new(
        session_of(&step.session_id),
        step.messages_being_compacted.clone().unwrap_or_default(),
        step.messages_remaining.clone().unwrap_or_default(),
    );
    if let Some(s) = &step.strategy {
        req = req.strategy(s);
    }
    if let Some(t) = &step.trigger {
        req = req.trigger(t);
    }
    agents
        .compact(&step.compact, req)
        .await
        .map(|o| o.to_json())
}

/// Run one step: its JSON outcome and, when it failed, why.
async fn run_step(agents: &AgentHost, step: &ProjectStep) -> ProjectOutcome {
    let mark = agents.audit().len();
    let mut outcome = run_step_at(agents, step).await;
    let expected: &[String] = match step {
        ProjectStep::StartSession(s) => s.expect.as_ref().map_or(&[], |e| &e.malformed),
        ProjectStep::Idle(s) => s.expect.as_ref().map_or(&[], |e| &e.malformed),
        ProjectStep::Compact(s) => s.expect.as_ref().map_or(&[], |e| &e.malformed),
        ProjectStep::ExpectAudit(_) => &[],
    };
    if outcome.failure.is_none() {
        outcome.failure = malformed_since(agents, mark, expected);
    }
    outcome
}

/// A hook answer the host refused as malformed (audited `plugin.hook.failed`
/// with `malformed_answer: true`, and treated as `null`) fails the step
/// that fired it, naming the plugin, the hook and why: the daemon would
/// ignore that answer. A step whose `expect: {malformed: [PLUGIN]}` names
/// the plugin expects it.
fn malformed_since(agents: &AgentHost, mark: usize, expected: &[String]) -> Option<String> {
    let bad: Vec<String> = agents
        .audit()
        .since(mark)
        .iter()
        .filter(|r| r.event == AuditEvent::HookFailed && r.get("malformed_answer") == true)
        .filter(|r| !expected.contains(&r.plugin))
        .map(|r| {
            format!(
                "{} answered {} with a malformed answer, treated as null: {}",
                r.plugin,
                r.get("hook").as_str().unwrap_or("a hook"),
                r.get("error_message").as_str().unwrap_or("no reason given")
            )
        })
        .collect();
    (!bad.is_empty()).then(|| bad.join("; "))
}

async fn run_step_at(agents: &AgentHost, step: &ProjectStep) -> ProjectOutcome {
    let (r, expect): (Result<Value, AgentHostError>, &Option<ProjectExpect>) = match step {
        ProjectStep::StartSession(s) => (
            agents
                .start_session(&s.start_session, session_of(&s.session_id))
                .await
                .map(|o| o.to_json()),
            &s.expect,
        ),
        ProjectStep::Idle(s) => (
            agents
                .idle(
                    &s.idle,
                    session_of(&s.session_id),
                    s.transcript.clone().unwrap_or_default(),
                )
                .await
                .map(|o| o.to_json()),
            &s.expect,
        ),
        ProjectStep::Compact(s) => (compact(agents, s).await, &s.expect),
        ProjectStep::ExpectAudit(a) => {
            let value = json!({"step": "expect_audit", "event": a.expect_audit});
            let failure = expect_audit(agents.audit(), a).err();
            return ProjectOutcome { value, failure };
        }
    };
    match r {
        Err(e) => ProjectOutcome {
            value: json!({"step": "error", "error": e.to_string()}),
            failure: Some(one_line("step failed", &e)),
        },
        Ok(v) => {
            let failure = match expect.as_ref().and_then(|e| e.result.as_ref()) {
                Some(want) if !subset(want, &v) => {
                    Some(format!("{}: expected {want}", describe(&v)))
                }
                _ => None,
            };
            ProjectOutcome { value: v, failure }
        }
    }
}
