//! `PluginCallContext`: the `_context` member of every daemon-to-plugin call.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The key under which the context travels inside `params`.
pub const CONTEXT_KEY: &str = "_context";

/// The canonical call context (`plugin-host.md`, Call context).
///
/// `project_id`, `agent_path` and `session_id` are set together for calls
/// from an agent run and are all null for daemon-level calls.
///
/// ```
/// use kaged_plugin_protocol::PluginCallContext;
/// let ctx = PluginCallContext::agent("music", "primary", "ses_1", "req_1");
/// assert!(ctx.check().is_ok());
/// let daemon = PluginCallContext::daemon("req_2");
/// assert!(daemon.check().is_ok() && daemon.agent_path.is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PluginCallContext {
    /// The operator who initiated the call; null (or absent) in insecure mode.
    #[serde(default)]
    pub operator_id: Option<String>,
    /// The normalized project root; null for daemon-level calls.
    pub project_id: Option<String>,
    /// The canonical agent path (`primary`, `primary.subagents.researcher`).
    pub agent_path: Option<String>,
    /// The session id, if applicable.
    pub session_id: Option<String>,
    /// A unique id for this request, for tracing and audit correlation.
    pub request_id: String,
}

/// A context that breaks the all-or-none rule for its agent fields.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("partially populated _context: {set} set but {unset} null (project_id, agent_path and session_id are set together or all null)")]
pub struct PartialContext {
    /// The agent fields that were set.
    pub set: String,
    /// The agent fields that were null.
    pub unset: String,
}

impl PluginCallContext {
    /// A context for a call from an agent run.
    pub fn agent(
        project_id: impl Into<String>,
        agent_path: impl Into<String>,
        session_id: impl Into<String>,
        request_id: impl Into<String>,
    ) -> PluginCallContext {
        PluginCallContext {
            operator_id: Some("operator".into()),
            project_id: Some(project_id.into()),
            agent_path: Some(agent_path.into()),
            session_id: Some(session_id.into()),
            request_id: request_id.into(),
        }
    }

    /// A context for a daemon-level call (no agent run).
    pub fn daemon(request_id: impl Into<String>) -> PluginCallContext {
        PluginCallContext {
            operator_id: Some("operator".into()),
            project_id: None,
            agent_path: None,
            session_id: None,
            request_id: request_id.into(),
        }
    }

    /// Whether the call comes from an agent run (all three agent fields set).
    pub fn is_agent_call(&self) -> bool {
        self.project_id.is_some() && self.agent_path.is_some() && self.session_id.is_some()
    }

    /// Enforce the spec's rule: `project_id`, `agent_path` and `session_id`
    /// are populated together or are all null.
    pub fn check(&self) -> Result<(), PartialContext> {
        let fields = [
            ("project_id", self.project_id.is_some()),
            ("agent_path", self.agent_path.is_some()),
            ("session_id", self.session_id.is_some()),
        ];
        let set: Vec<&str> = fields.iter().filter(|f| f.1).map(|f| f.0).collect();
        if set.is_empty() || set.len() == fields.len() {
            return Ok(());
        }
        let unset: Vec<&str> = fields.iter().filter(|f| !f.1).map(|f| f.0).collect();
        Err(PartialContext {
            set: set.join(", "),
            unset: unset.join(", "),
        })
    }
}

/// Take `_context` out of a params object, returning it (if present and
/// well-formed) and leaving the rest of the params in place.
///
/// ```
/// use kaged_plugin_protocol::take_context;
/// let mut params = serde_json::json!({"_context": {"project_id": null, "agent_path": null,
///     "session_id": null, "request_id": "r1"}, "filter": "web"});
/// let ctx = take_context(params.as_object_mut().unwrap()).unwrap().unwrap();
/// assert_eq!(ctx.request_id, "r1");
/// assert_eq!(params, serde_json::json!({"filter": "web"}));
/// ```
pub fn take_context(
    params: &mut Map<String, Value>,
) -> Result<Option<PluginCallContext>, serde_json::Error> {
    match params.remove(CONTEXT_KEY) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v).map(Some),
    }
}

/// Put a context into a params object (creating the object when params are
/// absent or null).
pub fn inject_context(params: Option<Value>, ctx: &PluginCallContext) -> Value {
    let mut obj = match params {
        Some(Value::Object(o)) => o,
        _ => Map::new(),
    };
    obj.insert(
        CONTEXT_KEY.into(),
        serde_json::to_value(ctx).unwrap_or(Value::Null),
    );
    Value::Object(obj)
}
