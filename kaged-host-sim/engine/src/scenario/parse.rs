//! Reading steps: each step is read as a map, its variant picked by the
//! one action key it holds, then the map is read as that variant's struct
//! (which refuses keys it does not have). Every error names the step, by
//! index from 1, and what a step of that kind may hold.

use std::fmt;

use kaged_host_core::FirstConfig;
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::step::{CallsStep, ProjectStep, SessionStep};

/// A kind of step: its action keys and how each becomes a step.
pub(super) trait StepKind: Sized {
    /// The action keys a step of this kind may hold, one of them.
    const ACTIONS: &'static [&'static str];
    /// The action keys of the other kind, and where they belong.
    const FOREIGN: (&'static [&'static str], &'static str);
    /// The step whose action is `action`, read from `map`; or why not.
    fn read(action: &str, map: Value) -> Result<Self, String>;
}

impl StepKind for SessionStep {
    const ACTIONS: &'static [&'static str] = &["call", "calls", "notify", "wait", "expect_audit"];
    const FOREIGN: (&'static [&'static str], &'static str) = (
        &["start_session", "idle", "compact"],
        "a project step (session --project FILE)",
    );
    fn read(action: &str, map: Value) -> Result<Self, String> {
        Ok(match action {
            "call" => SessionStep::Call(read(map)?),
            "calls" => SessionStep::Calls(read_calls(map)?),
            "notify" => SessionStep::Notify(read(map)?),
            "wait" => SessionStep::Wait(read(map)?),
            _ => SessionStep::ExpectAudit(read(map)?),
        })
    }
}

impl StepKind for ProjectStep {
    const ACTIONS: &'static [&'static str] = &["start_session", "idle", "compact", "expect_audit"];
    const FOREIGN: (&'static [&'static str], &'static str) = (
        &["call", "calls", "notify", "wait"],
        "a plugin-session step (session DIR, without --project)",
    );
    fn read(action: &str, map: Value) -> Result<Self, String> {
        Ok(match action {
            "start_session" => ProjectStep::StartSession(read(map)?),
            "idle" => ProjectStep::Idle(read(map)?),
            "compact" => ProjectStep::Compact(read(map)?),
            _ => ProjectStep::ExpectAudit(read(map)?),
        })
    }
}

fn read<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| e.to_string())
}

/// A `calls` step, an error naming the entry (from 1).
fn read_calls(map: Value) -> Result<CallsStep, String> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Raw {
        calls: Vec<Value>,
    }
    let raw: Raw = read(map)?;
    let calls = raw
        .calls
        .into_iter()
        .enumerate()
        .map(|(i, c)| read(c).map_err(|e| format!("entry {}: {e}", i + 1)))
        .collect::<Result<_, _>>()?;
    Ok(CallsStep { calls })
}

/// Why a step cannot be read (without its index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepError {
    /// The step's action, when it has exactly one.
    pub action: Option<String>,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.action {
            Some(action) => write!(f, "({action}): {}", self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

impl std::error::Error for StepError {}

fn quoted(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The step of kind `S` that `value` holds.
pub(super) fn read_step<S: StepKind>(value: Value) -> Result<S, StepError> {
    let wrong = |reason: String| StepError {
        action: None,
        reason,
    };
    let needs = format!("needs exactly one of {}", quoted(S::ACTIONS));
    let Value::Object(map) = value else {
        return Err(wrong(format!("{needs}; it is not a map but {value}")));
    };
    let (foreign, belongs) = S::FOREIGN;
    if let Some(key) = foreign.iter().find(|k| map.contains_key(**k)) {
        return Err(wrong(format!("{needs}; `{key}` is {belongs}")));
    }
    let found: Vec<&str> = S::ACTIONS
        .iter()
        .copied()
        .filter(|k| map.contains_key(*k))
        .collect();
    let action = match found[..] {
        [one] => one,
        [] => {
            let keys: Vec<&str> = map.keys().map(String::as_str).collect();
            return Err(wrong(format!(
                "{needs}; it has none (keys: {})",
                quoted(&keys)
            )));
        }
        _ => return Err(wrong(format!("{needs}; it has {}", quoted(&found)))),
    };
    S::read(action, Value::Object(map)).map_err(|reason| StepError {
        action: Some(action.to_string()),
        reason,
    })
}

/// The steps of kind `S` that `values` hold; the first error with the
/// index (from 1) of its step.
pub(super) fn read_steps<S: StepKind>(values: Vec<Value>) -> Result<Vec<S>, (usize, StepError)> {
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| read_step(v).map_err(|e| (i + 1, e)))
        .collect()
}

/// A script before its steps are read: each step a map.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScript {
    /// The first `config.update`: a map (over the schemas' defaults), or
    /// `off` / `false` for none.
    #[serde(default)]
    pub(super) config: Option<Value>,
    pub(super) steps: Vec<Value>,
}

/// A script's `config` key as the [`FirstConfig`] the session starts with.
pub(super) fn first_config(raw: Option<Value>) -> Result<FirstConfig, String> {
    match raw {
        None | Some(Value::Bool(true)) => Ok(FirstConfig::Defaults),
        Some(Value::Bool(false)) => Ok(FirstConfig::Off),
        Some(Value::String(s)) if s == "off" => Ok(FirstConfig::Off),
        Some(Value::String(s)) if s == "defaults" => Ok(FirstConfig::Defaults),
        Some(Value::Object(map)) => Ok(FirstConfig::Given(map)),
        Some(other) => Err(format!(
            "`config` is a map (the first config.update, over the schemas' defaults), `defaults` or `off`, not {other}"
        )),
    }
}

/// Deserialize a script's `steps` of kind `S`, an error naming the step.
pub(super) fn deserialize_script<'de, D, S>(d: D) -> Result<(FirstConfig, Vec<S>), D::Error>
where
    D: Deserializer<'de>,
    S: StepKind,
{
    let raw = RawScript::deserialize(d)?;
    let config = first_config(raw.config).map_err(D::Error::custom)?;
    let steps = read_steps(raw.steps)
        .map_err(|(index, e)| D::Error::custom(format!("step {index} {e}")))?;
    Ok((config, steps))
}

/// Deserialize one step of kind `S` (outside a script: no index).
pub(super) fn deserialize_step<'de, D, S>(d: D) -> Result<S, D::Error>
where
    D: Deserializer<'de>,
    S: StepKind,
{
    let map = Map::<String, Value>::deserialize(d)?;
    read_step(Value::Object(map)).map_err(|e| D::Error::custom(format!("step {e}")))
}
