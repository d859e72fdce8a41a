//! `hooks.answers[<hook>]` and `compaction.compactor_contract`: every
//! subscribed hook, fired with a full agent `_context`, answers within
//! `hook_timeout_sec` with a shape ADDENDUM §5-6 allows; a designated
//! compactor's `pre_compact` answer is a valid `CompactorResult`, judged by
//! the host's own compaction (`kaged_host_engine::AgentHost`).

use std::collections::BTreeMap;
use std::path::Path;

use kaged_host_core::audit::{AuditEvent, AuditRecord};
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

use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::Target;
use crate::runner::session::call_context::{agent_ctx, AGENT, PROJECT, SESSION};
use crate::runner::session::context::RunContext;
use crate::runner::session::probe::{or_stray, stray_detail};
use crate::runner::session::processes::{settle_after_call, LaneProcesses, Mode};
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

/// A code block, unicode, and the other contents a transcript holds that
/// a plugin's parser may trip on.
const CODE: &str =
    "Here is the fix:\n```rust\nfn main() { println!(\"{}\", 1 + 1); }\n```\nand `inline` code.";
const UNICODE: &str = "Ünïcödé: 日本語のテキスト, emoji 🚀🔥, RTL עברית, zero-width \u{200b}joiner, tab\tand \\ backslash";

/// `n` messages alternating user and assistant, each `content(i)`.
fn messages(n: usize, content: impl Fn(usize) -> String) -> Vec<Message> {
    (0..n)
        .map(|i| {
            let role = if i % 2 == 0 {
                MessageRole::User
            } else {
                MessageRole::Assistant
            };
            Message::new(format!("msg_{i:03}"), role, content(i))
        })
        .collect()
}

/// The payloads `hooks.answers` fires `hook` with, each named: the typical
/// one first, then the edges (empty, a code block, unicode, a long
/// message, many messages). A plugin's answer is judged on every one.
pub(crate) fn payloads(hook: HookName) -> Vec<(&'static str, Value)> {
    let variants: Vec<(&'static str, Vec<Message>)> = vec![
        ("empty", Vec::new()),
        (
            "a code block",
            messages(2, |i| {
                if i == 0 {
                    CODE.into()
                } else {
                    "Thanks.".into()
                }
            }),
        ),
        ("unicode", messages(2, |_| UNICODE.into())),
        (
            "a long message",
            messages(1, |_| "lorem ipsum ".repeat(2_000)),
        ),
        (
            "many messages",
            messages(60, |i| format!("message number {i}")),
        ),
    ];
    let mut out = vec![("typical", params_for(hook))];
    match hook {
        HookName::OnSessionStart => {}
        HookName::OnSessionIdle => out.extend(
            variants
                .into_iter()
                .map(|(name, m)| (name, json!({"transcript": m}))),
        ),
        HookName::PreCompact | HookName::PostCompact => {
            out.extend(variants.into_iter().map(|(name, m)| {
                let mut p = compact_params(hook, PluginRole::Observer);
                let half = m.len() / 2;
                p.messages_remaining = m[half..].to_vec();
                p.messages_being_compacted = m[..half].to_vec();
                if name == "empty" {
                    p.messages_remaining.clear();
                }
                (name, serde_json::to_value(p).unwrap_or_else(|_| json!({})))
            }))
        }
    }
    out
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
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    target: &Target,
) -> Verdict {
    let Target::Hook(hook) = target else {
        return Verdict::skip(format!("runs per hook, not for {target:?}"));
    };
    let hook = *hook;
    let all = payloads(hook);
    let mut answered = Vec::new();
    for (name, params) in &all {
        match fire(ctx, processes, scope, hook, name, params.clone()).await {
            Ok(a) => answered.push(format!(
                "{name}: {}",
                kaged_plugin_protocol::text::cut(&a.to_string(), 60)
            )),
            Err(v) => return v,
        }
    }
    Verdict::pass(format!(
        "{} answered a shape the spec allows for each of {} payload(s) ({})",
        hook.method(),
        all.len(),
        answered.join("; ")
    ))
}

/// Fire `hook` once with `params` (the payload `name`) on the shared
/// session: its answer, or the failing verdict naming the payload.
async fn fire(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    hook: HookName,
    name: &str,
    params: Value,
) -> Result<Value, Verdict> {
    let mark = ctx.audit.len();
    let on = format!("{} (payload: {name})", hook.method());
    let r = match processes.shared(ctx, scope).await {
        Err(e) => return Err(Verdict::no_session(e)),
        Ok(s) => {
            let call = s.call(hook.method(), Some(params), Some(call_ctx(hook)));
            match or_stray(&s.raw(), call).await {
                Ok(r) => {
                    settle_after_call(s, &r).await;
                    r
                }
                Err(v) => {
                    return Err(Verdict::fail(stray_detail(
                        &format!("an answer to {on}"),
                        &v,
                    )))
                }
            }
        }
    };
    let bad: Vec<String> = ctx
        .audit
        .since(mark)
        .iter()
        .filter(|e| {
            matches!(
                e.event,
                AuditEvent::HookTimeout | AuditEvent::HookFailed | AuditEvent::ProtocolViolation
            )
        })
        .map(AuditRecord::describe)
        .collect();
    let limit = ctx.timeouts.hook;
    match r {
        Err(CallError::Timeout { after, .. }) => Err(Verdict::fail(format!("expected: an answer to {on} within hook_timeout_sec ({after:?}); actual: none (plugin.hook.timeout; treated as null)"))),
        Err(CallError::Plugin { error, .. }) => Err(Verdict::fail(format!("expected: an answer to {on}; actual: error {} {:?} (plugin.hook.failed; treated as null)", error.code, error.message))),
        Err(e) => Err(Verdict::fail(format!("expected: an answer to {on} within {limit:?}; actual: {}", error_chain(&e)))),
        Ok(_) if !bad.is_empty() => Err(Verdict::fail(format!("expected: a clean answer to {on}; actual: the host audited {}", bad.join("; ")))),
        Ok(a) => match shape(hook, &a) {
            Ok(()) => Ok(a),
            Err(e) => Err(Verdict::fail_as(crate::catalogue::Kind::WrongAnswer, format!("expected: a {} answer of a shape ADDENDUM §5-6 allows, for the payload with {name}; actual: {a} ({e})\nfix: {} answers {}, whatever the transcript holds", hook.as_str(), hook.method(), allowed_answer(hook)))),
        },
    }
}

/// `compaction.compactor_contract`: as the primary agent's designated
/// compactor, the plugin's `pre_compact` answer is a valid
/// `CompactorResult`.
pub(crate) async fn compactor_contract(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let m = &ctx.manifest;
    if !m.effective_roles().contains(&PluginRole::Compactor) {
        Verdict::skip("the plugin does not declare the compactor role")
    } else if !m.hook_names().contains(&HookName::PreCompact) {
        Verdict::fail("expected: a compactor subscribes to pre_compact; actual: it does not, so it can never compact")
    } else if *processes.mode() != Mode::Strict {
        Verdict::skip(
            "the host launches an agent's plugins only after a clean handshake (see handshake.*)",
        )
    } else {
        let t = processes.new_transcript();
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
