//! `hooks.answers[<hook>]` and `compaction.compactor_contract`: every
//! subscribed hook, fired with a full agent `_context`, answers within
//! `hook_timeout_sec` with a shape ADDENDUM §5-6 allows; a designated
//! compactor's `pre_compact` answer is a valid `CompactorResult`, judged by
//! the host's own compaction (`kaged_host_engine::AgentHost`).

use std::collections::BTreeMap;
use std::path::Path;

use kaged_host_core::audit::AuditEvent;
use kaged_host_core::group_alive;
use kaged_host_core::CallError;
use kaged_host_core::HostSim;
use kaged_host_engine::agents::Project;
use kaged_host_engine::{AgentHost, CompactRequest, PluginDirs};
use kaged_plugin_protocol::{
    parse_observer_answer, parse_session_start_answer, CompactParams, HookName, Message,
    MessageRole, PluginCallContext, PluginRole,
};
use serde_json::{json, Value};

use crate::runner::call_context::{agent_ctx, AGENT, PROJECT, SESSION};
use crate::runner::check::Target;
use crate::runner::context::RunContext;
use crate::runner::probe::{or_stray, stray_detail};
use crate::runner::scope::Scope;
use crate::runner::sessions::{settle_after_call, Mode, Sessions};
use crate::runner::verdict::Verdict;
use kaged_plugin_protocol::error_chain::chain as error_chain;

pub(crate) fn call_ctx(hook: HookName) -> PluginCallContext {
    agent_ctx(hook.as_str())
}

/// Compaction params with always-keep messages in both lists.
fn compact_params(hook: HookName, role: PluginRole) -> CompactParams {
    CompactParams {
        context: call_ctx(hook),
        role,
        messages_being_compacted: vec![
            Message::new(
                "msg_001",
                MessageRole::User,
                "Please plan the staging deployment.",
            ),
            Message::new(
                "msg_002",
                MessageRole::Assistant,
                "Deploy target is staging; ESM only.",
            )
            .keep(),
            Message::new("msg_003", MessageRole::Tool, "deploy.sh: ok"),
        ],
        messages_remaining: vec![
            Message::new(
                "msg_004",
                MessageRole::User,
                "Always use TypeScript strict mode.",
            )
            .keep(),
            Message::new("msg_005", MessageRole::Assistant, "Noted."),
        ],
        strategy: "summarize".into(),
        trigger: "threshold_crossed".into(),
    }
}

pub(crate) fn params_for(hook: HookName) -> Value {
    match hook {
        HookName::OnSessionStart => json!({}),
        HookName::OnSessionIdle => json!({"transcript": [
            {"id": "msg_001", "role": "user", "content": "Hello"},
            {"id": "msg_002", "role": "assistant", "content": "Hi! How can I help?"}
        ]}),
        HookName::PreCompact | HookName::PostCompact => {
            serde_json::to_value(compact_params(hook, PluginRole::Observer))
                .unwrap_or_else(|_| json!({}))
        }
    }
}

/// The answers the spec allows for `hook` (as an observer), quoted for a
/// fix (ADR-0023; ADDENDUM §5-6).
fn allowed_answer(hook: HookName) -> &'static str {
    match hook {
        HookName::OnSessionStart => {
            "`null` (nothing to add), `{}`, or `{\"inject\": \"<text for the session's context>\"}`"
        }
        HookName::OnSessionIdle => "anything (side-effect only; `null` is usual)",
        HookName::PreCompact | HookName::PostCompact => {
            "`null`, `{}`, or `{\"retain\": [\"<text to keep>\", ...], \"inject\": \"<text>\"}` \
             (an observer; only the designated compactor answers a CompactorResult)"
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

/// `hooks.answers[<hook>]`: the hook, fired with a full agent
/// `_context`, answers in time with a shape ADDENDUM §5-6 allows.
pub(crate) async fn answers(
    ctx: &RunContext,
    sessions: &mut Sessions,
    scope: &mut Scope,
    target: &Target,
) -> Verdict {
    let Target::Hook(hook) = target else {
        return Verdict::skip(format!("runs per hook, not for {target:?}"));
    };
    let hook = *hook;
    let mark = ctx.audit.len();
    let r = match sessions.shared(ctx, scope).await {
        Err(e) => return Verdict::no_session(e),
        Ok(s) => {
            let call = s.call(hook.method(), Some(params_for(hook)), Some(call_ctx(hook)));
            match or_stray(&s.raw(), call).await {
                Ok(r) => {
                    settle_after_call(s, &r).await;
                    r
                }
                Err(v) => {
                    return Verdict::fail(stray_detail(
                        &format!("an answer to {}", hook.method()),
                        &v,
                    ))
                }
            }
        }
    };
    let bad: Vec<&str> = ctx
        .audit
        .since(mark)
        .iter()
        .filter(|e| {
            matches!(
                e.event,
                AuditEvent::HookTimeout | AuditEvent::HookFailed | AuditEvent::ProtocolViolation
            )
        })
        .map(|e| e.event.as_str())
        .collect();
    let limit = ctx.timeouts.hook;
    match r {
        Err(CallError::Timeout { after, .. }) => Verdict::fail(format!("expected: an answer within hook_timeout_sec ({after:?}); actual: none (plugin.hook.timeout; treated as null)")),
        Err(CallError::Plugin { error, .. }) => Verdict::fail(format!("expected: a hook answer; actual: error {} {:?} (plugin.hook.failed; treated as null)", error.code, error.message)),
        Err(e) => Verdict::fail(format!("expected: a hook answer within {limit:?}; actual: {}", error_chain(&e))),
        Ok(_) if !bad.is_empty() => Verdict::fail(format!("expected: a clean hook answer; actual: the host audited {}", bad.join(", "))),
        Ok(a) => match shape(hook, &a) {
            Ok(()) => Verdict::pass(format!("{} answered {}", hook.method(), kaged_host_core::transcript::cut(&a.to_string(), 200))),
            Err(e) => Verdict::fail_as(crate::report::Kind::WrongAnswer, format!("expected: a {} answer of a shape ADDENDUM §5-6 allows; actual: {a} ({e})\nfix: {} answers {}", hook.as_str(), hook.method(), allowed_answer(hook))),
        },
    }
}

/// `compaction.compactor_contract`: as the primary agent's designated
/// compactor, the plugin's `pre_compact` answer is a valid
/// `CompactorResult`.
pub(crate) async fn compactor_contract(
    ctx: &RunContext,
    sessions: &mut Sessions,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let m = &ctx.manifest;
    if !m.effective_roles().contains(&PluginRole::Compactor) {
        Verdict::skip("the plugin does not declare the compactor role")
    } else if !m.hook_names().contains(&HookName::PreCompact) {
        Verdict::fail("expected: a compactor subscribes to pre_compact; actual: it does not, so it can never compact")
    } else if *sessions.mode() != Mode::Strict {
        Verdict::skip(
            "the host launches an agent's plugins only after a clean handshake (see handshake.*)",
        )
    } else {
        let t = sessions.new_transcript();
        scope.touch_from(&t, 0);
        compact_as_delegate(ctx.host(t), &ctx.dir, &m.name).await
    }
}

/// Designate the plugin as the primary agent's compactor in a one-plugin
/// project and let the host's firing API compact a window (ADDENDUM §5:
/// `validate_compactor_result`, drop fallback and audit chain).
async fn compact_as_delegate(host: HostSim, dir: &Path, name: &str) -> Verdict {
    let package = format!("@conformance/{name}");
    let yaml = format!(
        "primary:\n  plugins:\n    subject:\n      package: \"{package}\"\n  compaction:\n    strategy: summarize\n    delegate:\n      plugin: subject\n"
    );
    let project = match Project::from_yaml_str(&yaml, "conformance-project.yaml") {
        Ok(p) => p.with_id(PROJECT),
        Err(e) => {
            return Verdict::skip(format!(
                "cannot build the one-plugin project: {}",
                error_chain(&e)
            ))
        }
    };
    let dirs = PluginDirs::Map(BTreeMap::from([(package, dir.to_path_buf())]));
    let agents = match AgentHost::start(host, &project, &dirs).await {
        Ok(a) => a,
        Err(e) => {
            return Verdict::fail(format!(
                "expected: the host starts the plugin as the primary agent's compactor; actual: {}",
                error_chain(&e)
            ))
        }
    };
    let p = compact_params(HookName::PreCompact, PluginRole::Compactor);
    let req = CompactRequest::new(SESSION, p.messages_being_compacted, p.messages_remaining)
        .strategy("summarize");
    let out = agents.compact(AGENT, req).await;
    let pids = agents.pids();
    agents.shutdown().await;
    for pid in pids {
        if group_alive(pid) {
            return Verdict::fail(format!(
                "process group {pid} survived the compaction host's shutdown"
            ));
        }
    }
    match out {
        Err(e) => Verdict::fail(format!("expected: a compaction; actual: {}", error_chain(&e))),
        Ok(out) if out.compactor.as_deref() != Some(name) => {
            Verdict::fail("expected: pre_compact with role \"compactor\"; actual: the host did not call the plugin as compactor")
        }
        Ok(out) if out.fallback => {
            let why = out
                .audit
                .iter()
                .find(|r| r.event == AuditEvent::CompactionFailed)
                .map(|r| format!("{} ({})", r.get("detail").as_str().unwrap_or_default(), r.get("reason").as_str().unwrap_or_default()))
                .unwrap_or_default();
            Verdict::fail(format!(
                "expected: a valid CompactorResult keeping the always-keep messages msg_002 and msg_004; actual: {why}; the host fell back to drop"
            ))
        }
        Ok(out) => Verdict::pass(format!(
            "a valid CompactorResult: {} message(s), {} superseded, every always-keep message kept",
            out.messages.len(),
            out.superseded.len()
        )),
    }
}
