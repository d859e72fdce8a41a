//! The `_context` of agent-level calls. Hooks and plugin tools are
//! dispatched by an agent run, so they carry a full `PluginCallContext`
//! (ADR-0023: "Every hook fire and every plugin-registered tool dispatch
//! receives PluginCallContext"; ADDENDUM §6). Custom methods and system
//! methods are daemon-level calls and carry none.

use kaged_plugin_protocol::PluginCallContext;

/// The project id the suite's agent runs in.
pub(crate) const PROJECT: &str = "conformance-project";
/// The agent path of the suite's agent.
pub(crate) const AGENT: &str = "primary";
/// The session id of the suite's agent run.
pub(crate) const SESSION: &str = "ses_conformance";

/// A full agent context (project, agent, session and operator set) whose
/// `request_id` is `req_conformance_<label>`.
pub(crate) fn agent_ctx(label: &str) -> PluginCallContext {
    PluginCallContext::agent(PROJECT, AGENT, SESSION, format!("req_conformance_{label}"))
}

/// How a call's context reads in a case detail.
pub(crate) fn describe(ctx: Option<&PluginCallContext>) -> String {
    match ctx {
        Some(c) if c.is_agent_call() => format!(
            "as agent `{}` of project `{}`, session `{}`",
            c.agent_path.as_deref().unwrap_or_default(),
            c.project_id.as_deref().unwrap_or_default(),
            c.session_id.as_deref().unwrap_or_default()
        ),
        _ => "with a daemon-level _context".to_string(),
    }
}
