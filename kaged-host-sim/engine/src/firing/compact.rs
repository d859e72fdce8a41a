//! One compaction of one agent's window (ADR-0024, ADDENDUM §5).
//!
//! 1. `pre_compact` fires on the agent's plugins subscribed to it, in
//!    declaration order (only plugins declared on that agent), each with
//!    `role` from [`ActivePlugin::compact_role`]: `compactor` for the
//!    agent's designated compactor, `observer` otherwise.
//! 2. The designated compactor's answer is checked with
//!    [`validate_compactor_result`]. Valid: its `messages` and `superseded`
//!    replace the strategy; audited `compaction.completed {strategy:
//!    "compactor", plugin, fallback: false, summary, messages, superseded}`.
//!    Invalid, an error or a timeout: the drop fallback
//!    ([`drop_fallback`]) and the chain `compaction.failed {plugin,
//!    agent_path, reason, detail}` then `compaction.completed {strategy:
//!    "drop", fallback: true, messages, superseded}`; `reason` is
//!    [`CompactorViolation::reason`](kaged_plugin_protocol::CompactorViolation::reason),
//!    `"timeout"` or `"error"`.
//! 3. Without a compactor (none designated, or the designated one does not
//!    receive `pre_compact` on this agent), the configured strategy runs.
//!    Only `drop` is implemented: any other strategy name (`summarize`, ...)
//!    is applied as `drop`; audited `compaction.completed {strategy: <as
//!    configured>, applied: "drop", fallback: false, messages, superseded}`
//!    under the plugin name [`super::HOST_AUDIT_NAME`].
//! 4. `post_compact` fires on the agent's plugins subscribed to it (the
//!    compactor too, with role `compactor`), in declaration order, with the
//!    result: `messages_being_compacted` = the superseded messages (in
//!    their original order), `messages_remaining` = the new message list;
//!    `strategy` and `trigger` as given.
//!
//! Observer answers (and the compactor's `post_compact` answer) are parsed
//! with [`parse_observer_answer`]: `retain` strings are collected and
//! non-empty `inject`s wrapped ([`wrap_inject`]), pre then post, in
//! declaration order. A malformed one is audited `plugin.hook.failed`
//! (`malformed_answer: true`) and treated as `null`.

use std::collections::HashSet;

use kaged_plugin_protocol::{
    drop_fallback, parse_observer_answer, validate_compactor_result, wrap_inject, CompactParams,
    HookName, Message, PluginRole,
};
use serde_json::{json, Value};

use super::start::injects_to_json;
use super::{audit_json, AgentHost, AgentHostError, HOST_AUDIT_NAME};
use crate::agents::ActivePlugin;
use kaged_host_core::audit::{AuditEvent, AuditRecord};
use kaged_host_core::CallError;

/// The strategy the host implements itself.
pub const DROP: &str = "drop";

/// What to compact.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactRequest {
    /// The session id (for `_context`).
    pub session_id: String,
    /// The messages the strategy compacts.
    pub messages_being_compacted: Vec<Message>,
    /// The messages that stay.
    pub messages_remaining: Vec<Message>,
    /// The configured strategy (default `drop`).
    pub strategy: String,
    /// Why compaction runs (default `threshold_crossed`).
    pub trigger: String,
}

impl CompactRequest {
    /// A request with strategy `drop` and trigger `threshold_crossed`.
    pub fn new(
        session_id: impl Into<String>,
        messages_being_compacted: Vec<Message>,
        messages_remaining: Vec<Message>,
    ) -> CompactRequest {
        CompactRequest {
            session_id: session_id.into(),
            messages_being_compacted,
            messages_remaining,
            strategy: DROP.to_string(),
            trigger: "threshold_crossed".to_string(),
        }
    }

    /// The same request with this strategy.
    pub fn strategy(mut self, strategy: impl Into<String>) -> CompactRequest {
        self.strategy = strategy.into();
        self
    }

    /// The same request with this trigger.
    pub fn trigger(mut self, trigger: impl Into<String>) -> CompactRequest {
        self.trigger = trigger.into();
        self
    }
}

/// What one compaction produced.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionOutcome {
    /// The agent path.
    pub agent_path: String,
    /// The new message list.
    pub messages: Vec<Message>,
    /// The ids marked superseded.
    pub superseded: Vec<String>,
    /// Every `retain` string of the observers, pre then post, in order.
    pub retained: Vec<String>,
    /// (plugin name, wrapped inject), pre then post, in declaration order.
    pub injects: Vec<(String, String)>,
    /// The designated compactor that received `pre_compact`, if any.
    pub compactor: Option<String>,
    /// Whether the compactor failed and the drop fallback ran.
    pub fallback: bool,
    /// What produced the list: `compactor` or `drop`.
    pub applied: String,
    /// The compactor's `summary`, when its result was used.
    pub summary: Option<String>,
    /// The audit records emitted meanwhile.
    pub audit: Vec<AuditRecord>,
}

impl CompactionOutcome {
    /// The JSON form (`--json` output of the CLI).
    pub fn to_json(&self) -> Value {
        json!({"step": "compact", "agent_path": self.agent_path, "messages": self.messages,
               "superseded": self.superseded, "retained": self.retained,
               "injects": injects_to_json(&self.injects), "compactor": self.compactor,
               "fallback": self.fallback, "applied": self.applied, "summary": self.summary,
               "audit": audit_json(&self.audit)})
    }
}

/// How the compactor's `pre_compact` went.
enum CompactorAnswer {
    Valid {
        messages: Vec<Message>,
        superseded: Vec<String>,
        summary: Option<String>,
    },
    Failed {
        reason: String,
        detail: String,
    },
}

/// Retained strings and wrapped injects collected from observers.
#[derive(Default)]
struct Observed {
    retained: Vec<String>,
    injects: Vec<(String, String)>,
}

impl AgentHost {
    /// Compact `agent_path`'s window (see the module docs).
    pub async fn compact(
        &self,
        agent_path: &str,
        req: CompactRequest,
    ) -> Result<CompactionOutcome, AgentHostError> {
        let agent = self.agent(agent_path)?;
        let mark = self.audit().len();
        let mut base = CompactParams {
            context: self.context(agent_path, &req.session_id),
            role: PluginRole::Observer,
            messages_being_compacted: req.messages_being_compacted,
            messages_remaining: req.messages_remaining,
            strategy: req.strategy,
            trigger: req.trigger,
        };
        let mut observed = Observed::default();
        let mut compactor: Option<(String, CompactorAnswer)> = None;
        for p in agent.hooks_to_fire(HookName::PreCompact) {
            let answer = self.fire_compact(p, HookName::PreCompact, &base).await;
            if p.compact_role() == PluginRole::Compactor {
                compactor = Some((p.name.clone(), judge(&base, answer)));
            } else {
                self.observe(p, HookName::PreCompact, agent_path, answer, &mut observed);
            }
        }
        let (messages, superseded, summary, fallback, applied) = match compactor.as_ref() {
            Some((
                name,
                CompactorAnswer::Valid {
                    messages,
                    superseded,
                    summary,
                },
            )) => {
                self.audit().emit(
                    AuditEvent::CompactionCompleted,
                    name,
                    json!({"plugin": name, "agent_path": agent_path, "strategy": "compactor",
                           "fallback": false, "summary": summary,
                           "messages": messages.len(), "superseded": superseded}),
                );
                let (m, s, sum) = (messages.clone(), superseded.clone(), summary.clone());
                (m, s, sum, false, "compactor")
            }
            Some((name, CompactorAnswer::Failed { reason, detail })) => {
                let drop = drop_fallback(&base);
                self.audit().emit(
                    AuditEvent::CompactionFailed,
                    name,
                    json!({"plugin": name, "agent_path": agent_path, "reason": reason,
                           "detail": detail}),
                );
                self.audit().emit(
                    AuditEvent::CompactionCompleted,
                    name,
                    json!({"plugin": name, "agent_path": agent_path, "strategy": DROP,
                           "fallback": true, "messages": drop.messages.len(),
                           "superseded": drop.superseded}),
                );
                (drop.messages, drop.superseded, None, true, DROP)
            }
            None => {
                let drop = drop_fallback(&base);
                self.audit().emit(
                    AuditEvent::CompactionCompleted,
                    HOST_AUDIT_NAME,
                    json!({"agent_path": agent_path, "strategy": base.strategy,
                           "applied": DROP, "fallback": false,
                           "messages": drop.messages.len(), "superseded": drop.superseded}),
                );
                (drop.messages, drop.superseded, None, false, DROP)
            }
        };
        let gone: HashSet<&str> = superseded.iter().map(String::as_str).collect();
        base.messages_being_compacted
            .retain(|m| gone.contains(m.id.as_str()));
        base.messages_remaining = messages.clone();
        for p in agent.hooks_to_fire(HookName::PostCompact) {
            let answer = self.fire_compact(p, HookName::PostCompact, &base).await;
            self.observe(p, HookName::PostCompact, agent_path, answer, &mut observed);
        }
        Ok(CompactionOutcome {
            agent_path: agent_path.to_string(),
            messages,
            superseded,
            retained: observed.retained,
            injects: observed.injects,
            compactor: compactor.map(|(name, _)| name),
            fallback,
            applied: applied.to_string(),
            summary,
            audit: self.audit().since(mark),
        })
    }

    async fn fire_compact(
        &self,
        p: &ActivePlugin,
        hook: HookName,
        base: &CompactParams,
    ) -> Result<Value, CallError> {
        let session_id = base.context.session_id.as_deref().unwrap_or_default();
        let agent_path = base.context.agent_path.as_deref().unwrap_or_default();
        let context = self.context(agent_path, session_id);
        let params = CompactParams {
            context: context.clone(),
            role: p.compact_role(),
            ..base.clone()
        };
        let params = serde_json::to_value(&params).unwrap_or_else(|_| json!({}));
        self.fire(p, hook, context, params).await
    }

    fn observe(
        &self,
        p: &ActivePlugin,
        hook: HookName,
        agent_path: &str,
        answer: Result<Value, CallError>,
        into: &mut Observed,
    ) {
        let Ok(answer) = answer else { return };
        match parse_observer_answer(&answer) {
            Ok(Some(r)) => {
                let gave: Vec<&str> = [
                    ("retain", r.retain.is_some()),
                    ("inject", r.inject.is_some()),
                ]
                .into_iter()
                .filter_map(|(k, given)| given.then_some(k))
                .collect();
                if !self.observer_may(p, hook, agent_path, &gave) {
                    return;
                }
                into.retained.extend(r.retain.unwrap_or_default());
                if let Some(w) = r.inject.as_deref().and_then(|i| wrap_inject(&p.name, i)) {
                    into.injects.push((p.name.clone(), w));
                }
            }
            Ok(None) => {}
            Err(why) => self.malformed(&p.name, hook, agent_path, &why),
        }
    }
}

/// Classify the designated compactor's `pre_compact` outcome.
fn judge(params: &CompactParams, answer: Result<Value, CallError>) -> CompactorAnswer {
    match answer {
        Ok(v) => match validate_compactor_result(params, &v) {
            Ok(r) => CompactorAnswer::Valid {
                messages: r.messages,
                superseded: r.superseded,
                summary: r.summary,
            },
            Err(violation) => CompactorAnswer::Failed {
                reason: violation.reason().to_string(),
                detail: violation.to_string(),
            },
        },
        Err(CallError::Timeout { after, .. }) => CompactorAnswer::Failed {
            reason: "timeout".to_string(),
            detail: format!("no answer within hook_timeout_sec ({after:?})"),
        },
        Err(e) => CompactorAnswer::Failed {
            reason: "error".to_string(),
            detail: kaged_host_core::one_line("pre_compact failed", &e),
        },
    }
}
