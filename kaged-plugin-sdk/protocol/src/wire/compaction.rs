//! The compactor contract (ADR-0024, ADDENDUM §5-6), written once: the
//! host validates answers and computes the drop fallback with these
//! functions, and plugin authors use them in their own tests.

use std::collections::HashSet;

use serde_json::Value;

use super::hooks::{
    CompactParams, CompactorResult, Message, ObserverResult, PluginRole, SessionStartResult,
};

/// Why a designated compactor's answer is not a valid `CompactorResult`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactorViolation {
    /// `null`, `{}` or an observer-shaped answer.
    #[error("the designated compactor answered {0} instead of a CompactorResult")]
    NotACompactorResult(String),
    /// The answer does not have the `CompactorResult` shape.
    #[error("malformed CompactorResult: {0}")]
    Malformed(String),
    /// `role` is not `compactor`.
    #[error("CompactorResult role must be \"compactor\"")]
    WrongRole,
    /// An always-keep message is missing from `messages`.
    #[error("always-keep message `{0}` is missing from messages")]
    DroppedAlwaysKeep(String),
    /// A superseded id is not in `messages_being_compacted`.
    #[error("superseded id `{0}` is not one of messages_being_compacted")]
    SupersededNotCompacted(String),
    /// An always-keep message is marked superseded.
    #[error("superseded id `{0}` is an always-keep message")]
    SupersededAlwaysKeep(String),
}

impl CompactorViolation {
    /// A short machine-readable reason (used in `compaction.failed`).
    pub fn reason(&self) -> &'static str {
        match self {
            CompactorViolation::NotACompactorResult(_) => "not_a_compactor_result",
            CompactorViolation::Malformed(_) => "malformed_result",
            CompactorViolation::WrongRole => "wrong_role",
            CompactorViolation::DroppedAlwaysKeep(_) => "compactor_dropped_always_keep",
            CompactorViolation::SupersededNotCompacted(_) => "superseded_not_compacted",
            CompactorViolation::SupersededAlwaysKeep(_) => "superseded_always_keep",
        }
    }
}

/// The ids of every always-keep message, in either list.
pub fn always_keep_ids(params: &CompactParams) -> HashSet<&str> {
    params
        .messages_being_compacted
        .iter()
        .chain(&params.messages_remaining)
        .filter(|m| m.always_keep)
        .map(|m| m.id.as_str())
        .collect()
}

/// Validate a designated compactor's raw answer against ADDENDUM §5.
///
/// ```
/// use kaged_plugin_protocol::*;
/// let ctx = PluginCallContext::agent("p", "primary", "s", "r");
/// let params = CompactParams { context: ctx, role: PluginRole::Compactor,
///     messages_being_compacted: vec![Message::new("m1", MessageRole::User, "a"),
///                                    Message::new("m2", MessageRole::User, "b").keep()],
///     messages_remaining: vec![Message::new("m3", MessageRole::User, "c")],
///     strategy: "summarize".into(), trigger: "threshold_crossed".into() };
/// let good = serde_json::json!({"role": "compactor", "superseded": ["m1"],
///     "messages": [{"id": "m2", "role": "user", "content": "b", "always_keep": true},
///                  {"id": "m3", "role": "user", "content": "c"}]});
/// assert!(validate_compactor_result(&params, &good).is_ok());
/// let dropped = serde_json::json!({"role": "compactor", "superseded": ["m1"], "messages": []});
/// assert_eq!(validate_compactor_result(&params, &dropped).unwrap_err(),
///            CompactorViolation::DroppedAlwaysKeep("m2".into()));
/// ```
pub fn validate_compactor_result(
    params: &CompactParams,
    answer: &Value,
) -> Result<CompactorResult, CompactorViolation> {
    match answer {
        Value::Null => return Err(CompactorViolation::NotACompactorResult("null".into())),
        Value::Object(o) if o.is_empty() => {
            return Err(CompactorViolation::NotACompactorResult("{}".into()))
        }
        Value::Object(o) if !o.contains_key("role") && !o.contains_key("messages") => {
            return Err(CompactorViolation::NotACompactorResult(
                "an observer-shaped answer".into(),
            ))
        }
        _ => {}
    }
    if answer.get("role").and_then(Value::as_str) != Some("compactor") {
        return Err(CompactorViolation::WrongRole);
    }
    let result: CompactorResult = serde_json::from_value(answer.clone())
        .map_err(|e| CompactorViolation::Malformed(e.to_string()))?;
    let keep = always_keep_ids(params);
    let returned: HashSet<&str> = result.messages.iter().map(|m| m.id.as_str()).collect();
    let mut missing: Vec<&str> = keep
        .iter()
        .copied()
        .filter(|id| !returned.contains(id))
        .collect();
    missing.sort_unstable();
    if let Some(id) = missing.first() {
        return Err(CompactorViolation::DroppedAlwaysKeep((*id).to_string()));
    }
    let compacted: HashSet<&str> = params
        .messages_being_compacted
        .iter()
        .map(|m| m.id.as_str())
        .collect();
    for id in &result.superseded {
        if !compacted.contains(id.as_str()) {
            return Err(CompactorViolation::SupersededNotCompacted(id.clone()));
        }
        if keep.contains(id.as_str()) {
            return Err(CompactorViolation::SupersededAlwaysKeep(id.clone()));
        }
    }
    Ok(result)
}

/// The outcome of the drop strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct DropOutcome {
    /// The always-keep messages of `messages_being_compacted` in order, then
    /// `messages_remaining`.
    pub messages: Vec<Message>,
    /// Every other id of `messages_being_compacted`.
    pub superseded: Vec<String>,
}

/// The drop fallback of ADDENDUM §5.
pub fn drop_fallback(params: &CompactParams) -> DropOutcome {
    let (kept, dropped): (Vec<&Message>, Vec<&Message>) = params
        .messages_being_compacted
        .iter()
        .partition(|m| m.always_keep);
    DropOutcome {
        messages: kept
            .into_iter()
            .chain(&params.messages_remaining)
            .cloned()
            .collect(),
        superseded: dropped.into_iter().map(|m| m.id.clone()).collect(),
    }
}

/// An observer's answer (ADDENDUM §5): `null`, `{}` or `{retain?, inject?}`.
/// Anything else is an error naming what was wrong.
pub fn parse_observer_answer(answer: &Value) -> Result<Option<ObserverResult>, String> {
    match answer {
        Value::Null => Ok(None),
        Value::Object(o) if o.is_empty() => Ok(None),
        Value::Object(o) => {
            if let Some(k) = o.keys().find(|k| *k != "retain" && *k != "inject") {
                return Err(format!("unexpected member `{k}` in an observer answer"));
            }
            serde_json::from_value(answer.clone())
                .map(Some)
                .map_err(|e| e.to_string())
        }
        other => Err(format!(
            "an observer answer must be null or an object, got {other}"
        )),
    }
}

/// An `on_session_start` answer: `null`, no result, `{}` or `{inject}`.
pub fn parse_session_start_answer(answer: &Value) -> Result<Option<String>, String> {
    match answer {
        Value::Null => Ok(None),
        Value::Object(_) => {
            let r: SessionStartResult =
                serde_json::from_value(answer.clone()).map_err(|e| e.to_string())?;
            Ok(r.inject.filter(|s| !s.is_empty()))
        }
        other => Err(format!(
            "an on_session_start answer must be null or an object, got {other}"
        )),
    }
}

/// Wrap a plugin's non-empty inject as `<plugin:NAME>\n{inject}\n</plugin:NAME>`
/// (ADDENDUM §6); an empty inject yields `None`.
///
/// ```
/// use kaged_plugin_protocol::wrap_inject;
/// assert_eq!(wrap_inject("mem", "hi").unwrap(), "<plugin:mem>\nhi\n</plugin:mem>");
/// assert_eq!(wrap_inject("mem", ""), None);
/// ```
pub fn wrap_inject(plugin: &str, inject: &str) -> Option<String> {
    (!inject.is_empty()).then(|| format!("<plugin:{plugin}>\n{inject}\n</plugin:{plugin}>"))
}

/// Builds a valid `CompactorResult` from "keep these, summarise those":
/// always-keep messages are kept whatever the caller asks.
///
/// ```
/// use kaged_plugin_protocol::*;
/// # let ctx = PluginCallContext::agent("p", "primary", "s", "r");
/// # let params = CompactParams { context: ctx, role: PluginRole::Compactor,
/// #     messages_being_compacted: vec![Message::new("m1", MessageRole::User, "a"),
/// #                                    Message::new("m2", MessageRole::User, "b").keep()],
/// #     messages_remaining: vec![Message::new("m3", MessageRole::User, "c")],
/// #     strategy: "summarize".into(), trigger: "threshold_crossed".into() };
/// let result = CompactorPlan::new(&params)
///     .summarise_all("Earlier: a and b.")
///     .build();
/// assert_eq!(result.superseded, ["m1"]); // m2 is always-keep: kept, not superseded
/// assert!(validate_compactor_result(&params, &serde_json::to_value(&result).unwrap()).is_ok());
/// ```
#[derive(Debug, Clone)]
pub struct CompactorPlan<'a> {
    params: &'a CompactParams,
    summarised: HashSet<String>,
    summary: Option<String>,
    summary_id: String,
}

impl<'a> CompactorPlan<'a> {
    /// Start from the hook's params: by default every message is kept.
    pub fn new(params: &'a CompactParams) -> CompactorPlan<'a> {
        CompactorPlan {
            params,
            summarised: HashSet::new(),
            summary: None,
            summary_id: format!("summary_{}", params.context.request_id),
        }
    }

    /// Replace these compacted messages by the summary (always-keep ones
    /// and ids not being compacted are ignored).
    pub fn summarise<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        ids: I,
        summary: impl Into<String>,
    ) -> Self {
        self.summarised.extend(ids.into_iter().map(Into::into));
        self.summary = Some(summary.into());
        self
    }

    /// Replace every compacted message that is not always-keep.
    pub fn summarise_all(self, summary: impl Into<String>) -> Self {
        let ids: Vec<String> = self
            .params
            .messages_being_compacted
            .iter()
            .map(|m| m.id.clone())
            .collect();
        self.summarise(ids, summary)
    }

    /// The id given to the summary message (default `summary_<request_id>`).
    pub fn summary_id(mut self, id: impl Into<String>) -> Self {
        self.summary_id = id.into();
        self
    }

    /// The result: the summary message (a `system` message) where the first
    /// summarised message stood, every other message in order.
    pub fn build(self) -> CompactorResult {
        let mut messages = Vec::new();
        let mut superseded = Vec::new();
        let mut summary_placed = false;
        for m in &self.params.messages_being_compacted {
            if !m.always_keep && self.summarised.contains(&m.id) {
                superseded.push(m.id.clone());
                if let (false, Some(text)) = (summary_placed, &self.summary) {
                    messages.push(Message::new(
                        self.summary_id.clone(),
                        super::MessageRole::System,
                        text.clone(),
                    ));
                    summary_placed = true;
                }
            } else {
                messages.push(m.clone());
            }
        }
        messages.extend(self.params.messages_remaining.iter().cloned());
        CompactorResult {
            role: PluginRole::Compactor,
            messages,
            superseded,
            summary: self.summary,
        }
    }
}
