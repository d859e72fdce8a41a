//! `on_session_start` and `on_session_idle` (primary only, ADR-0023).
//!
//! Both fire on the plugins of the agent that subscribe to the hook, in
//! declaration order, one after the other. On a subagent path nothing fires
//! (sessions are primary-owned; resolution already warned with
//! `plugin.hook.illegal`): the outcome is empty. A timeout or an error is
//! `null` and the session continues.
//!
//! `on_session_start`: every non-empty `inject` is wrapped
//! `<plugin:NAME>\n{inject}\n</plugin:NAME>` ([`wrap_inject`], ADDENDUM §6)
//! and the wrapped blocks are joined with `\n`, in declaration order, into
//! the system-prompt prefix.

use kaged_plugin_protocol::{
    parse_session_start_answer, wrap_inject, HookName, Message, SessionIdleParams,
    SessionStartParams, Transcript,
};
use serde::Serialize;
use serde_json::{json, Value};

use super::{audit_json, AgentHost, AgentHostError};
use kaged_host_core::audit::AuditRecord;

/// What `on_session_start` produced.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionStart {
    /// The agent path.
    pub agent_path: String,
    /// The session id.
    pub session_id: String,
    /// The wrapped injects joined with `\n` (empty when nothing was injected).
    pub system_prompt_prefix: String,
    /// (plugin name, wrapped inject), in declaration order.
    pub injects: Vec<(String, String)>,
    /// The audit records emitted meanwhile.
    pub audit: Vec<AuditRecord>,
}

/// What `on_session_idle` did.
#[derive(Debug, Clone, PartialEq)]
pub struct IdleOutcome {
    /// The agent path.
    pub agent_path: String,
    /// The session id.
    pub session_id: String,
    /// The plugins the hook was fired on, in declaration order.
    pub fired: Vec<String>,
    /// The plugins that answered (any answer; it is ignored).
    pub acknowledged: Vec<String>,
    /// The audit records emitted meanwhile.
    pub audit: Vec<AuditRecord>,
}

#[derive(Serialize)]
struct Inject<'a> {
    plugin: &'a str,
    inject: &'a str,
}

fn injects_json(injects: &[(String, String)]) -> Vec<Value> {
    injects
        .iter()
        .map(|(plugin, inject)| json!(Inject { plugin, inject }))
        .collect()
}

impl SessionStart {
    /// The JSON form (`--json` output of the CLI).
    pub fn to_json(&self) -> Value {
        json!({"step": "start_session", "agent_path": self.agent_path,
               "session_id": self.session_id,
               "system_prompt_prefix": self.system_prompt_prefix,
               "injects": injects_json(&self.injects), "audit": audit_json(&self.audit)})
    }
}

impl IdleOutcome {
    /// The JSON form (`--json` output of the CLI).
    pub fn to_json(&self) -> Value {
        json!({"step": "idle", "agent_path": self.agent_path, "session_id": self.session_id,
               "fired": self.fired, "acknowledged": self.acknowledged,
               "audit": audit_json(&self.audit)})
    }
}

pub(super) fn injects_to_json(injects: &[(String, String)]) -> Vec<Value> {
    injects_json(injects)
}

impl AgentHost {
    /// Fire `on_session_start` on `agent_path` (normally `primary`) for a
    /// new session and collect the wrapped injects (see the module docs).
    pub async fn start_session(
        &self,
        agent_path: &str,
        session_id: &str,
    ) -> Result<SessionStart, AgentHostError> {
        let agent = self.agent(agent_path)?;
        let mark = self.audit().len();
        let mut injects = Vec::new();
        for p in agent.hooks_to_fire(HookName::OnSessionStart) {
            let context = self.context(agent_path, session_id);
            let params = SessionStartParams {
                context: context.clone(),
            };
            let params = serde_json::to_value(&params).unwrap_or_else(|_| json!({}));
            let Ok(answer) = self
                .fire(p, HookName::OnSessionStart, context, params)
                .await
            else {
                continue;
            };
            match parse_session_start_answer(&answer) {
                Ok(Some(text)) => {
                    let hook = HookName::OnSessionStart;
                    if !self.observer_may(p, hook, agent_path, &["inject"]) {
                        continue;
                    }
                    if let Some(w) = wrap_inject(&p.name, &text) {
                        injects.push((p.name.clone(), w));
                    }
                }
                Ok(None) => {}
                Err(why) => self.malformed(&p.name, HookName::OnSessionStart, agent_path, &why),
            }
        }
        let system_prompt_prefix = injects
            .iter()
            .map(|(_, w)| w.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        Ok(SessionStart {
            agent_path: agent_path.to_string(),
            session_id: session_id.to_string(),
            system_prompt_prefix,
            injects,
            audit: self.audit().since(mark),
        })
    }

    /// Fire `on_session_idle` on `agent_path` (normally `primary`) with the
    /// transcript as an array of messages; answers are ignored.
    pub async fn idle(
        &self,
        agent_path: &str,
        session_id: &str,
        transcript: Vec<Message>,
    ) -> Result<IdleOutcome, AgentHostError> {
        let agent = self.agent(agent_path)?;
        let mark = self.audit().len();
        let mut fired = Vec::new();
        let mut acknowledged = Vec::new();
        for p in agent.hooks_to_fire(HookName::OnSessionIdle) {
            let context = self.context(agent_path, session_id);
            let params = SessionIdleParams {
                context: context.clone(),
                transcript: Transcript::Messages(transcript.clone()),
            };
            let params = serde_json::to_value(&params).unwrap_or_else(|_| json!({}));
            fired.push(p.name.clone());
            if self
                .fire(p, HookName::OnSessionIdle, context, params)
                .await
                .is_ok()
            {
                acknowledged.push(p.name.clone());
            }
        }
        Ok(IdleOutcome {
            agent_path: agent_path.to_string(),
            session_id: session_id.to_string(),
            fired,
            acknowledged,
            audit: self.audit().since(mark),
        })
    }
}
