//! The steps of a script, one type per action: [`SessionStep`] for a
//! plugin session (`session DIR --script FILE`), [`ProjectStep`] for a
//! project (`session --project FILE --script FILE`). Each variant holds a
//! struct with exactly that action's keys; [`super::parse`] picks the
//! variant by the action key a step holds.

use kaged_plugin_protocol::{Message, PluginCallContext};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One step of a plugin-session script: exactly one of `call`, `calls`,
/// `notify`, `wait`, `expect_audit`.
///
/// It is written (and serialized) as the flat map of its variant:
/// `{call: echo.say, params: {text: hi}}`.
// A script holds a handful of steps, read once: not boxing the call keeps
// matching on it plain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SessionStep {
    /// Call a method.
    Call(CallStep),
    /// Send calls at once, answered in any order.
    Calls(CallsStep),
    /// Send a notification to the plugin.
    Notify(NotifyStep),
    /// Wait for a notification from the plugin.
    Wait(WaitStep),
    /// Expect an audit event to have been emitted.
    ExpectAudit(ExpectAuditStep),
}

/// One step of a project script: exactly one of `start_session`, `idle`,
/// `compact`, `expect_audit`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ProjectStep {
    /// Fire `on_session_start` on an agent path.
    StartSession(StartSessionStep),
    /// Fire `on_session_idle` on an agent path.
    Idle(IdleStep),
    /// Compact an agent path's window.
    Compact(CompactStep),
    /// Expect an audit event to have been emitted.
    ExpectAudit(ExpectAuditStep),
}

/// `call: METHOD`, with optional `params`, `context` and `expect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallStep {
    /// The method.
    pub call: String,
    /// Its params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Its `_context` (an agent's call, a tool); none for a daemon-level
    /// call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<PluginCallContext>,
    /// What it must produce; without it the call only has to succeed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
}

impl CallStep {
    /// A call of `method` without params, context or expectation.
    pub fn new(method: impl Into<String>) -> CallStep {
        CallStep {
            call: method.into(),
            params: None,
            context: None,
            expect: None,
        }
    }
}

/// `calls: [{call: ...}, ...]`: calls sent at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallsStep {
    /// The calls, in the order they are sent.
    pub calls: Vec<CallStep>,
}

/// `notify: METHOD`, with optional `params`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyStep {
    /// The notification's method.
    pub notify: String,
    /// Its params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// `wait: METHOD`, with an optional `timeout_ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitStep {
    /// The notification waited for.
    pub wait: String,
    /// The limit in milliseconds, scaled by the time scale (default
    /// [`SCRIPT_WAIT_SEC`](kaged_host_core::time::SCRIPT_WAIT_SEC) seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// `expect_audit: EVENT`, with optional `data` (a plugin session or a
/// project).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectAuditStep {
    /// The audit event's name (`plugin.notification`).
    pub expect_audit: String,
    /// Data the event must contain (subset match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// `start_session: AGENT_PATH`: fire `on_session_start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartSessionStep {
    /// The agent path.
    pub start_session: String,
    /// The session id (default [`DEFAULT_SESSION`](super::DEFAULT_SESSION)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// What the outcome must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<ProjectExpect>,
}

/// `idle: AGENT_PATH`: fire `on_session_idle`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdleStep {
    /// The agent path.
    pub idle: String,
    /// The session id (default [`DEFAULT_SESSION`](super::DEFAULT_SESSION)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The transcript so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Vec<Message>>,
    /// What the outcome must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<ProjectExpect>,
}

/// `compact: AGENT_PATH`: compact the agent path's window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactStep {
    /// The agent path.
    pub compact: String,
    /// The session id (default [`DEFAULT_SESSION`](super::DEFAULT_SESSION)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The messages being compacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages_being_compacted: Option<Vec<Message>>,
    /// The messages that stay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages_remaining: Option<Vec<Message>>,
    /// The configured strategy (default `drop`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// The trigger (default `threshold_crossed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// What the outcome must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<ProjectExpect>,
}

/// The expected outcome of a call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The result must contain this (subset match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The call must fail with this code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<i64>,
}

/// The expected outcome of a project step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectExpect {
    /// The step's JSON outcome must contain this (subset match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Plugins whose malformed hook answers this step expects (a scenario
    /// showing that the host ignores them); any other plugin's malformed
    /// answer fails the step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub malformed: Vec<String>,
}

impl SessionStep {
    /// The step's action key (`call`, `calls`, ...).
    pub fn action(&self) -> &'static str {
        match self {
            SessionStep::Call(_) => "call",
            SessionStep::Calls(_) => "calls",
            SessionStep::Notify(_) => "notify",
            SessionStep::Wait(_) => "wait",
            SessionStep::ExpectAudit(_) => "expect_audit",
        }
    }
}

impl ProjectStep {
    /// The step's action key (`start_session`, `idle`, ...).
    pub fn action(&self) -> &'static str {
        match self {
            ProjectStep::StartSession(_) => "start_session",
            ProjectStep::Idle(_) => "idle",
            ProjectStep::Compact(_) => "compact",
            ProjectStep::ExpectAudit(_) => "expect_audit",
        }
    }
}

impl From<CallStep> for SessionStep {
    fn from(s: CallStep) -> SessionStep {
        SessionStep::Call(s)
    }
}

impl From<CallsStep> for SessionStep {
    fn from(s: CallsStep) -> SessionStep {
        SessionStep::Calls(s)
    }
}

impl From<NotifyStep> for SessionStep {
    fn from(s: NotifyStep) -> SessionStep {
        SessionStep::Notify(s)
    }
}

impl From<WaitStep> for SessionStep {
    fn from(s: WaitStep) -> SessionStep {
        SessionStep::Wait(s)
    }
}

impl From<ExpectAuditStep> for SessionStep {
    fn from(s: ExpectAuditStep) -> SessionStep {
        SessionStep::ExpectAudit(s)
    }
}
