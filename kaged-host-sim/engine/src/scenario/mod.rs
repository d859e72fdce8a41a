//! Scenarios: a YAML script of steps run against one plugin session, as
//! `kaged-host-sim session DIR --script FILE` runs them, and the same
//! steps built in Rust ([`Scenario`]) for snapshot tests.
//!
//! ```yaml
//! steps:
//!   - call: good.echo                 # a call, with optional params and context
//!     params: {text: hi}
//!     context: {operator_id: operator, project_id: music, agent_path: primary,
//!               session_id: s1, request_id: r1}
//!     expect: {result: {echo: {text: hi}}}   # subset match; or {error: -32601}
//!   - calls:                          # calls sent at once, answered in any order
//!       - {call: delay.echo, params: {n: 1, ms: 30}}
//!       - {call: delay.echo, params: {n: 2, ms: 0}}
//!   - notify: some.event              # a notification to the plugin
//!     params: {}
//!   - wait: echo.done                 # a notification from the plugin
//!     timeout_ms: 5000                # scaled by --time-scale; default 5000
//!   - expect_audit: plugin.notification
//!     data: {notification_type: echo.done}   # subset match, optional
//! ```
//!
//! Each step begins a step of the transcript
//! ([`Transcript::mark_step`](kaged_host_core::Transcript::mark_step)), so its normal
//! form ([`kaged_host_core::normal`]) is the same run after run.
//!
//! With `session --project`, steps are `start_session`, `idle`, `compact`
//! and `expect_audit` on agent paths instead (the CLI's project mode).

mod builder;
mod run;

use kaged_plugin_protocol::{Message, PluginCallContext};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use builder::{Scenario, ScenarioError, ScenarioRun};
pub use run::{run_steps, StepOutcome};

/// A scenario file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The steps, run in order.
    pub steps: Vec<Step>,
}

/// Why a script cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The YAML does not parse as a script.
    #[error("invalid script: {0}")]
    Syntax(String),
    /// A step has no action or more than one.
    #[error("invalid script: step {index} needs exactly one of {allowed}")]
    Step {
        /// The step, from 1.
        index: usize,
        /// What it may hold.
        allowed: &'static str,
    },
}

/// What a plugin-session step may hold.
const SESSION_ACTIONS: &str =
    "call, calls, notify, wait, expect_audit (start_session, idle and compact need --project)";

impl Script {
    /// Parse a YAML script.
    pub fn from_yaml_str(text: &str) -> Result<Script, ScriptError> {
        serde_saphyr::from_str(text).map_err(|e| ScriptError::Syntax(e.to_string()))
    }

    /// Check that every step is a plugin-session step with one action.
    pub fn check_session_steps(&self) -> Result<(), ScriptError> {
        for (i, step) in self.steps.iter().enumerate() {
            let actions = [
                step.call.is_some(),
                step.calls.is_some(),
                step.notify.is_some(),
                step.wait.is_some(),
                step.expect_audit.is_some(),
            ]
            .iter()
            .filter(|a| **a)
            .count();
            let project_only =
                step.start_session.is_some() || step.idle.is_some() || step.compact.is_some();
            if actions != 1 || project_only {
                return Err(ScriptError::Step {
                    index: i + 1,
                    allowed: SESSION_ACTIONS,
                });
            }
        }
        Ok(())
    }
}

/// One step: exactly one of `call`, `calls`, `notify`, `wait`,
/// `expect_audit` (a plugin session), or of `start_session`, `idle`,
/// `compact`, `expect_audit` (`session --project FILE`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Call this method.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// Send these calls at once (each a step with `call`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<Vec<Step>>,
    /// Send this notification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notify: Option<String>,
    /// Wait for a notification with this name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<String>,
    /// Expect this audit event to have been emitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect_audit: Option<String>,
    /// Params of `call` / `notify`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Context of `call`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<PluginCallContext>,
    /// What `call` must produce.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
    /// `wait` limit in milliseconds (scaled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Data the `expect_audit` event must contain (subset match).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// `--project`: fire `on_session_start` on this agent path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_session: Option<String>,
    /// `--project`: fire `on_session_idle` on this agent path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle: Option<String>,
    /// `--project`: compact this agent path's window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compact: Option<String>,
    /// `--project`: the session id (default `ses_1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// `idle`: the transcript.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Vec<Message>>,
    /// `compact`: the messages being compacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages_being_compacted: Option<Vec<Message>>,
    /// `compact`: the messages that stay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages_remaining: Option<Vec<Message>>,
    /// `compact`: the configured strategy (default `drop`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// `compact`: the trigger (default `threshold_crossed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
}

/// The expected outcome of a call.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The result must contain this (subset match).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The call must fail with this code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<i64>,
}

/// Whether `actual` contains `expected`: objects by key (recursively), other
/// values by equality.
///
/// ```
/// use kaged_host_engine::scenario::subset;
/// use serde_json::json;
/// assert!(subset(&json!({"a": {"b": 1}}), &json!({"a": {"b": 1, "c": 2}, "d": 3})));
/// assert!(!subset(&json!({"a": 2}), &json!({"a": 1})));
/// ```
pub fn subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|av| subset(v, av))),
        _ => expected == actual,
    }
}
