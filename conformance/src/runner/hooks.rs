//! `hooks.answers[<hook>]` and `compaction.compactor_contract`: every
//! subscribed hook, fired with a full agent `_context`, answers within
//! `hook_timeout_sec` with a shape ADDENDUM §5-6 allows; a designated
//! compactor's `pre_compact` answer is a valid `CompactorResult`.

use kaged_host_sim::audit::AuditEvent;
use kaged_host_sim::call::CallError;
use kaged_plugin_sdk::protocol::{
    drop_fallback, parse_observer_answer, parse_session_start_answer, validate_compactor_result, CompactParams,
    HookName, Message, MessageRole, PluginCallContext, PluginRole,
};
use serde_json::{json, Value};

use super::sessions::chain;
use super::{Suite, Verdict};

const PROJECT: &str = "conformance-project";
const AGENT: &str = "primary";
const SESSION: &str = "ses_conformance";

fn ctx(hook: HookName) -> PluginCallContext {
    PluginCallContext::agent(PROJECT, AGENT, SESSION, format!("req_conformance_{}", hook.as_str()))
}

/// Compaction params with always-keep messages in both lists.
pub(crate) fn compact_params(hook: HookName, role: PluginRole) -> CompactParams {
    CompactParams {
        context: ctx(hook),
        role,
        messages_being_compacted: vec![
            Message::new("msg_001", MessageRole::User, "Please plan the staging deployment."),
            Message::new("msg_002", MessageRole::Assistant, "Deploy target is staging; ESM only.").keep(),
            Message::new("msg_003", MessageRole::Tool, "deploy.sh: ok"),
        ],
        messages_remaining: vec![
            Message::new("msg_004", MessageRole::User, "Always use TypeScript strict mode.").keep(),
            Message::new("msg_005", MessageRole::Assistant, "Noted."),
        ],
        strategy: "summarize".into(),
        trigger: "threshold_crossed".into(),
    }
}

fn params_for(hook: HookName) -> Value {
    match hook {
        HookName::OnSessionStart => json!({}),
        HookName::OnSessionIdle => json!({"transcript": [
            {"id": "msg_001", "role": "user", "content": "Hello"},
            {"id": "msg_002", "role": "assistant", "content": "Hi! How can I help?"}
        ]}),
        HookName::PreCompact | HookName::PostCompact => {
            serde_json::to_value(compact_params(hook, PluginRole::Observer)).unwrap_or_else(|_| json!({}))
        }
    }
}

/// Whether `answer` is a shape the spec allows for `hook` (as an observer).
fn shape(hook: HookName, answer: &Value) -> Result<(), String> {
    match hook {
        HookName::OnSessionStart => parse_session_start_answer(answer).map(|_| ()),
        // "none (side-effect only)": any acknowledgement will do.
        HookName::OnSessionIdle => Ok(()),
        HookName::PreCompact | HookName::PostCompact => parse_observer_answer(answer).map(|_| ()),
    }
}

pub(crate) async fn run(suite: &mut Suite<'_>) {
    let Some(m) = suite.manifest.clone() else { return };
    let hooks = m.hook_names();
    if hooks.is_empty() {
        suite.record("hooks.answers", "hooks.answers", Verdict::skip("the manifest subscribes to no hook"));
    }
    for hook in hooks {
        let id = format!("hooks.answers[{}]", hook.as_str());
        let Some(mut scope) = suite.begin("hooks.answers", id) else { continue };
        let mark = suite.audit.len();
        let r = match suite.shared(&mut scope).await {
            Err(e) => {
                suite.end(scope, Verdict::skip(format!("no session: {e}")));
                continue;
            }
            Ok(s) => {
                let r = s.call(hook.method(), Some(params_for(hook)), Some(ctx(hook))).await;
                super::methods::settle(s, &r).await;
                r
            }
        };
        let bad: Vec<&str> = suite
            .audit
            .since(mark)
            .iter()
            .filter(|e| matches!(e.event, AuditEvent::HookTimeout | AuditEvent::HookFailed | AuditEvent::ProtocolViolation))
            .map(|e| e.event.as_str())
            .collect();
        let limit = suite.timeouts().hook;
        let v = match r {
            Err(CallError::Timeout { after, .. }) => Verdict::fail(format!("expected: an answer within hook_timeout_sec ({after:?}); actual: none (plugin.hook.timeout; treated as null)")),
            Err(CallError::Plugin { error, .. }) => Verdict::fail(format!("expected: a hook answer; actual: error {} {:?} (plugin.hook.failed; treated as null)", error.code, error.message)),
            Err(e) => Verdict::fail(format!("expected: a hook answer within {limit:?}; actual: {}", chain(&e))),
            Ok(_) if !bad.is_empty() => Verdict::fail(format!("expected: a clean hook answer; actual: the host audited {}", bad.join(", "))),
            Ok(a) => match shape(hook, &a) {
                Ok(()) => Verdict::pass(format!("{} answered {}", hook.method(), kaged_host_sim::transcript::cut(&a.to_string(), 200))),
                Err(e) => Verdict::fail(format!("expected: a {} answer of a shape ADDENDUM §5-6 allows; actual: {a} ({e})", hook.as_str())),
            },
        };
        suite.end(scope, v);
    }
    compactor(suite).await;
}

async fn compactor(suite: &mut Suite<'_>) {
    let Some(m) = suite.manifest.clone() else { return };
    let Some(mut scope) = suite.begin("compaction.compactor_contract", "compaction.compactor_contract") else { return };
    if !m.effective_roles().contains(&PluginRole::Compactor) {
        suite.end(scope, Verdict::skip("the plugin does not declare the compactor role"));
        return;
    }
    if !m.hook_names().contains(&HookName::PreCompact) {
        suite.end(scope, Verdict::fail("expected: a compactor subscribes to pre_compact; actual: it does not, so it can never compact"));
        return;
    }
    let params = compact_params(HookName::PreCompact, PluginRole::Compactor);
    let body = serde_json::to_value(&params).unwrap_or_else(|_| json!({}));
    let r = match suite.shared(&mut scope).await {
        Err(e) => {
            suite.end(scope, Verdict::skip(format!("no session: {e}")));
            return;
        }
        Ok(s) => s.call(HookName::PreCompact.method(), Some(body), Some(params.context.clone())).await,
    };
    let problem = match r {
        Ok(answer) => match validate_compactor_result(&params, &answer) {
            Ok(res) => {
                let v = Verdict::pass(format!(
                    "a valid CompactorResult: {} message(s), {} superseded, every always-keep message kept",
                    res.messages.len(),
                    res.superseded.len()
                ));
                suite.end(scope, v);
                return;
            }
            Err(violation) => (violation.reason().to_string(), format!("an invalid CompactorResult: {violation}; answer {}", kaged_host_sim::transcript::cut(&answer.to_string(), 300))),
        },
        Err(CallError::Timeout { after, .. }) => ("timeout".to_string(), format!("no answer within hook_timeout_sec ({after:?})")),
        Err(e) => ("error".to_string(), chain(&e)),
    };
    // The drop fallback and its audit chain (ADDENDUM §5), emitted here
    // because kaged-host-sim has no compaction firing API yet.
    let fallback = drop_fallback(&params);
    suite.audit.emit(
        AuditEvent::CompactionFailed,
        &m.name,
        json!({"plugin": m.name, "agent_path": AGENT, "reason": problem.0}),
    );
    suite.audit.emit(
        AuditEvent::CompactionCompleted,
        &m.name,
        json!({"strategy": "drop", "fallback": true, "messages": fallback.messages.len(), "superseded": fallback.superseded}),
    );
    let v = Verdict::fail(format!(
        "expected: a valid CompactorResult keeping the always-keep messages msg_002 and msg_004; actual: {} (the host falls back to drop)",
        problem.1
    ));
    suite.end(scope, v);
}
