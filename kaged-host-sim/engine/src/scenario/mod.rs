//! Scenarios: a YAML script of steps run against one plugin session, as
//! `kaged-host-sim session DIR --script FILE` runs them, and the same
//! steps built in Rust ([`Scenario`]) for snapshot tests.
//!
//! ```yaml
//! config: {greeting: hi}              # optional: the first config.update, sent
//!                                     # right after `initialized` over the
//!                                     # schemas' defaults; `off` sends none
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
//! Each step holds exactly one action; the other keys are those of its
//! action ([`SessionStep`]). A step with none, two, a project action or a
//! key its action does not take is refused, naming the step
//! ([`ScriptError::Step`]).
//!
//! With `session --project`, a [`ProjectScript`] runs against a whole
//! project ([`run_project_steps`], through an [`AgentHost`](crate::AgentHost)):
//!
//! ```yaml
//! steps:
//!   - start_session: primary          # on_session_start
//!     session_id: ses_1               # default "ses_1"
//!     expect: {result: {injects: [{plugin: memory}]}}   # subset of the JSON outcome
//!   - idle: primary                   # on_session_idle
//!     transcript: [{id: u1, role: user, content: hi}]
//!   - compact: primary.subagents.researcher
//!     messages_being_compacted: [{id: m1, role: user, content: old}]
//!     messages_remaining: [{id: m2, role: user, content: new}]
//!     strategy: summarize             # default drop
//!     trigger: threshold_crossed      # default
//!     expect: {result: {fallback: false}}   # a malformed hook answer fails the
//!                                     # step unless `malformed: [PLUGIN]` expects it
//!   - expect_audit: compaction.completed
//!     data: {strategy: compactor}
//! ```

mod builder;
mod parse;
mod project;
mod run;
mod step;

use kaged_host_core::FirstConfig;
use kaged_plugin_protocol::manifest::from_yaml_str;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

pub use builder::{Scenario, ScenarioError, ScenarioRun};
pub use parse::StepError;
pub use project::{run_project_steps, ProjectOutcome, DEFAULT_SESSION};
pub use run::{run_steps, StepOutcome};
pub use step::{
    CallStep, CallsStep, CompactStep, Expect, ExpectAuditStep, IdleStep, NotifyStep, ProjectExpect,
    ProjectStep, SessionStep, StartSessionStep, WaitStep,
};

/// A plugin-session script (`session DIR --script FILE`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Script {
    /// The first `config.update` (ADDENDUM §12, §15): the schemas'
    /// defaults unless the script's `config` says otherwise.
    #[serde(
        skip_serializing_if = "is_defaults",
        serialize_with = "serialize_first_config"
    )]
    pub config: FirstConfig,
    /// The steps, run in order.
    pub steps: Vec<SessionStep>,
}

/// A project script (`session --project FILE --script FILE`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProjectScript {
    /// The steps, run in order.
    pub steps: Vec<ProjectStep>,
}

/// Why a script cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The YAML does not parse as a script (a map with `steps`, a list of
    /// maps).
    #[error("invalid script: {0}")]
    Syntax(String),
    /// A step has no action, more than one, one of the other kind of
    /// script, or a key or value its action does not take.
    #[error("invalid script: step {index} {error}")]
    Step {
        /// The step, from 1.
        index: usize,
        /// What is wrong with it.
        error: StepError,
    },
}

fn from_yaml<S: parse::StepKind>(text: &str) -> Result<(FirstConfig, Vec<S>), ScriptError> {
    let raw: parse::RawScript =
        from_yaml_str(text).map_err(|e| ScriptError::Syntax(e.to_string()))?;
    let config = parse::first_config(raw.config).map_err(ScriptError::Syntax)?;
    let steps = parse::read_steps(raw.steps)
        .map_err(|(index, error)| ScriptError::Step { index, error })?;
    Ok((config, steps))
}

fn is_defaults(c: &FirstConfig) -> bool {
    *c == FirstConfig::Defaults
}

/// A script's `config` as YAML reads it back: a map, `off` or `defaults`.
fn serialize_first_config<S: serde::Serializer>(c: &FirstConfig, s: S) -> Result<S::Ok, S::Error> {
    match c {
        FirstConfig::Given(map) => map.serialize(s),
        FirstConfig::Off => s.serialize_str("off"),
        FirstConfig::Defaults => s.serialize_str("defaults"),
    }
}

impl Script {
    /// Parse a YAML plugin-session script.
    ///
    /// ```
    /// use kaged_host_engine::scenario::{Script, SessionStep};
    /// let script = Script::from_yaml_str("steps:\n  - call: echo.say\n    params: {text: hi}\n").unwrap();
    /// assert!(matches!(&script.steps[0], SessionStep::Call(c) if c.call == "echo.say"));
    /// let err = Script::from_yaml_str("steps:\n  - call: a\n  - idle: primary\n").unwrap_err();
    /// assert!(err.to_string().starts_with("invalid script: step 2 needs exactly one of `call`"));
    /// ```
    pub fn from_yaml_str(text: &str) -> Result<Script, ScriptError> {
        let (config, steps) = from_yaml(text)?;
        Ok(Script { config, steps })
    }
}

impl ProjectScript {
    /// Parse a YAML project script.
    pub fn from_yaml_str(text: &str) -> Result<ProjectScript, ScriptError> {
        match from_yaml(text)? {
            (FirstConfig::Defaults, steps) => Ok(ProjectScript { steps }),
            _ => Err(ScriptError::Syntax(
                "`config` is for a plugin session: a project's plugins get their agents' config"
                    .into(),
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Script {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Script, D::Error> {
        parse::deserialize_script(d).map(|(config, steps)| Script { config, steps })
    }
}

impl<'de> Deserialize<'de> for ProjectScript {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ProjectScript, D::Error> {
        parse::deserialize_script(d).map(|(_, steps)| ProjectScript { steps })
    }
}

impl<'de> Deserialize<'de> for SessionStep {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SessionStep, D::Error> {
        parse::deserialize_step(d)
    }
}

impl<'de> Deserialize<'de> for ProjectStep {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ProjectStep, D::Error> {
        parse::deserialize_step(d)
    }
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
