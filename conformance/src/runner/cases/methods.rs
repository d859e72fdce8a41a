//! `methods.*` and `config.update_accepted`: every declared method and tool
//! answers in time; tools answer a result for arguments generated from
//! their schema and `-32602` for arguments that break it.
//!
//! Tools are dispatched by agents, so every tool call carries a full agent
//! `_context` (see [`crate::runner::session::call_context`]); custom methods are
//! daemon-level calls. A well-formed error (e.g. `-32006 not_applicable`
//! from a method that needs a project) still counts as an answer for
//! `methods.answers`.

use kaged_host_core::audit::{AuditEvent, AuditRecord, Violation};
use kaged_host_core::CallError;
use kaged_plugin_protocol::{methods, PluginCallContext, INVALID_PARAMS};
use serde_json::{json, Value};

use crate::catalogue::Kind;
use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::{Target, ToolTarget};
use crate::runner::session::call_context::{agent_ctx, describe};
use crate::runner::session::context::RunContext;
use crate::runner::session::probe::{or_stray, stray_detail};
use crate::runner::session::processes::{settle_after_call, LaneProcesses};
use crate::schema_args::{accepts_every_object, args_breaking_schema, args_from_schema};
use crate::valid_args::{judge_error, ValidArgsAnswer};
use kaged_plugin_protocol::error_chain::chain as error_chain;

/// Audit events that mean a call went wrong whatever it returned.
pub(super) const BAD_EVENTS: [AuditEvent; 4] = [
    AuditEvent::ProtocolViolation,
    AuditEvent::Crashed,
    AuditEvent::Killed,
    AuditEvent::OversizeMessage,
];

/// A violation by the plugin's own requests (their ids), judged by
/// `protocol.request_ids_monotonic`, not by the answer of the call.
pub(super) fn about_own_requests(e: &AuditRecord) -> bool {
    e.get("violation_type").as_str() == Some(Violation::RequestIdNotIncreasing.as_str())
}

/// What a call must answer.
enum Expect {
    /// A result or a well-formed error, in time.
    Answer,
    /// A result, or a domain error (`-32000..-32099` but `-32002` and `-32006`): the
    /// arguments were accepted.
    Result,
    /// `-32602` naming `field`.
    InvalidParams { field: String, how: String },
}

/// A call as an agent dispatches the tool `t`, labelled `what`.
fn as_agent(t: &ToolTarget, what: &str) -> Option<PluginCallContext> {
    Some(agent_ctx(&format!("{}_{what}", t.name)))
}

/// The skip of a per-tool case given another target (the table never
/// does).
fn not_a_tool(target: &Target) -> Verdict {
    Verdict::skip(format!("runs per tool, not for {target:?}"))
}

/// `methods.answers[<method or tool>]`: an answer within the request
/// timeout (tools get arguments generated from their schema, or `{}`).
pub(crate) async fn answers(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    target: &Target,
) -> Verdict {
    match target {
        Target::Method(m) => {
            call(
                ctx,
                processes,
                scope,
                m,
                Some(json!({})),
                None,
                Expect::Answer,
            )
            .await
        }
        Target::Tool(t) => {
            let args = args_from_schema(&t.schema).unwrap_or_else(|_| json!({}));
            let as_agent = as_agent(t, "answers");
            call(
                ctx,
                processes,
                scope,
                &t.method,
                Some(args),
                as_agent,
                Expect::Answer,
            )
            .await
        }
        other => Verdict::skip(format!("runs per method or tool, not for {other:?}")),
    }
}

/// `methods.tool_valid_args[<tool>]`: arguments generated from the schema
/// are accepted.
pub(crate) async fn tool_valid_args(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    target: &Target,
) -> Verdict {
    let Target::Tool(t) = target else {
        return not_a_tool(target);
    };
    match args_from_schema(&t.schema) {
        Ok(args) => {
            let as_agent = as_agent(t, "valid");
            call(
                ctx,
                processes,
                scope,
                &t.method,
                Some(args),
                as_agent,
                Expect::Result,
            )
            .await
        }
        Err(e) => Verdict::skip_as(
            Kind::Untestable,
            format!(
                "could not generate arguments from parameters_schema: {e}; give the property an `examples:` value that satisfies it (a `pattern` needs one)"
            ),
        ),
    }
}

/// `methods.tool_invalid_args[<tool>]`: arguments that break the schema
/// get -32602 naming the field.
pub(crate) async fn tool_invalid_args(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    target: &Target,
) -> Verdict {
    let Target::Tool(t) = target else {
        return not_a_tool(target);
    };
    match args_breaking_schema(&t.schema) {
        Some(bad) => {
            let expect = Expect::InvalidParams { field: bad.field.clone(), how: bad.how.clone() };
            let as_agent = as_agent(t, "invalid");
            call(ctx, processes, scope, &t.method, Some(bad.args), as_agent, expect).await
        }
        None if accepts_every_object(&t.schema) => Verdict::skip(
            "parameters_schema accepts every object: there are no arguments that break it",
        ),
        None => Verdict::skip_as(
            Kind::Untestable,
            "could not generate arguments that break parameters_schema: give its properties `examples:` values that satisfy them (a `pattern` needs one)",
        ),
    }
}

/// Call `method` on the shared session and judge the answer.
async fn call(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    method: &str,
    params: Option<Value>,
    call_ctx: Option<PluginCallContext>,
    expect: Expect,
) -> Verdict {
    let args = params
        .as_ref()
        .map(Value::to_string)
        .unwrap_or_else(|| "none".into());
    let shown = format!("{method}({args}) {}", describe(call_ctx.as_ref()));
    match call_shared(ctx, processes, scope, method, params, call_ctx, &shown).await {
        Ok((r, bad)) => judge(method, &shown, r, &expect, &bad),
        Err(v) => v,
    }
}

/// One call of `method` (shown as `shown`) on the shared session, ended
/// early by a stray answer, settled; with the violations the host audited
/// meanwhile ([`BAD_EVENTS`], less those about the plugin's own requests).
/// `Err`: the case's verdict already (no session, or a stray answer).
pub(super) async fn call_shared(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    method: &str,
    params: Option<Value>,
    call_ctx: Option<PluginCallContext>,
    shown: &str,
) -> Result<(Result<Value, CallError>, Vec<String>), Verdict> {
    let mark = ctx.audit.len();
    let r = match processes.shared(ctx, scope).await {
        Err(e) => return Err(Verdict::no_session(e)),
        Ok(s) => match or_stray(&s.raw(), s.call(method, params, call_ctx)).await {
            Ok(r) => {
                settle_after_call(s, &r).await;
                r
            }
            Err(v) => {
                return Err(Verdict::fail(stray_detail(
                    &format!("an answer to {shown}"),
                    &v,
                )))
            }
        },
    };
    let bad = ctx
        .audit
        .since(mark)
        .iter()
        .filter(|e| BAD_EVENTS.contains(&e.event) && !about_own_requests(e))
        .map(AuditRecord::describe)
        .collect();
    Ok((r, bad))
}

/// The verdict of one call; `call` shows it (`method(args) as ...`).
fn judge(
    method: &str,
    call: &str,
    r: Result<Value, CallError>,
    expect: &Expect,
    bad: &[String],
) -> Verdict {
    if let Err(CallError::Unavailable { .. }) = &r {
        return Verdict::blocked_by(&crate::catalogue::HANDSHAKE_METHODS_COMPLETE, format!("{method} is marked unavailable by the host: the plugin did not list it in initialize (see handshake.methods_complete)"));
    }
    let broken = |what: String| {
        let mut d = what;
        if !bad.is_empty() {
            d.push_str(&format!(" (audit: {})", bad.join("; ")));
        }
        Verdict::fail(d)
    };
    match (expect, r) {
        (_, Err(CallError::Timeout { after, .. })) => broken(format!("expected: an answer within {after:?}; actual: none (the host kills the plugin)")),
        (_, Err(CallError::Closed { .. })) => broken(format!("expected: an answer to {method}; actual: the plugin ended before answering")),
        (_, _) if !bad.is_empty() => audited(method, bad),
        (Expect::Answer, Ok(_)) => Verdict::pass(format!("{call} answered a result")),
        (Expect::Answer, Err(CallError::Plugin { error, .. })) => {
            Verdict::pass(format!("{call} answered a well-formed error {} {:?}", error.code, error.message))
        }
        (Expect::Result, Ok(v)) => Verdict::pass(format!("{call} answered {}", kaged_plugin_protocol::text::cut(&v.to_string(), 200))),
        (Expect::Result, Err(CallError::Plugin { error, .. })) => match judge_error(error.code, &error.message) {
            ValidArgsAnswer::Accepted => Verdict::pass(format!(
                "{call} accepted the arguments and answered a domain error {} {:?}",
                error.code, error.message
            )),
            ValidArgsAnswer::Refused(why) => Verdict::fail(format!(
                "expected: a result (or a domain error) for {call}, whose arguments satisfy parameters_schema; actual: error {} {:?} ({why})",
                error.code, error.message
            )),
        },
        (Expect::InvalidParams { field, how }, Err(CallError::Plugin { error, .. })) if error.code == INVALID_PARAMS => {
            let data = error.data.as_ref().map(Value::to_string).unwrap_or_default();
            if error.message.contains(field.as_str()) || data.contains(field.as_str()) {
                Verdict::pass(format!("{call} ({how} `{field}`) answered -32602 {:?}", error.message))
            } else {
                Verdict::fail(format!("expected: -32602 whose message names `{field}` ({how}); actual: -32602 {:?}", error.message))
            }
        }
        (Expect::InvalidParams { field, how }, Err(CallError::Plugin { error, .. })) => Verdict::fail(format!(
            "expected: -32602 for {call} ({how} `{field}`); actual: error {} {:?}",
            error.code, error.message
        )),
        (Expect::InvalidParams { field, how }, Ok(v)) => Verdict::fail(format!(
            "expected: -32602 for {call} ({how} `{field}`); actual: result {}",
            kaged_plugin_protocol::text::cut(&v.to_string(), 200)
        )),
        (_, Err(e)) => Verdict::fail(format!("expected: an answer to {method}; actual: {}", error_chain(&e))),
    }
}

/// `config.update_accepted`: on a fresh session, the first `config.update`,
/// sent right after `initialized` with a config valid for both schemas (as
/// the daemon does: ADDENDUM §12, §15, §16), is answered with a result.
/// Every other session of the run is sent it too; this case judges it.
pub(crate) async fn config_update_accepted(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let source = match (
        &ctx.manifest.config_schema,
        &ctx.manifest.system_config_schema,
    ) {
        (None, None) => "no config schema: the empty config",
        (Some(_), None) => "valid for config_schema",
        (None, Some(_)) => "valid for system_config_schema",
        (Some(_), Some(_)) => "valid for config_schema and system_config_schema, merged",
    };
    let s = match processes.fresh_unconfigured(ctx, scope).await {
        Err(e) => return Verdict::no_session(e),
        Ok(s) => s,
    };
    let params = Value::Object(ctx.daemon_config());
    let shown = params.to_string();
    let expected = format!(
        "the first config.update {shown} ({source}), sent right after initialized as the daemon does, answered with a result"
    );
    let v = match or_stray(&s.raw(), s.call(methods::CONFIG_UPDATE, Some(params), None)).await {
        Err(v) => Verdict::fail(stray_detail(&expected, &v)),
        Ok(Ok(_)) => Verdict::pass(format!(
            "the first config.update {shown} ({source}), sent right after initialized, accepted"
        )),
        Ok(Err(CallError::Plugin { error, .. })) => Verdict::fail(format!(
            "expected: {expected}; actual: error {} {:?}",
            error.code, error.message
        )),
        Ok(Err(e)) => Verdict::fail(format!("expected: {expected}; actual: {}", error_chain(&e))),
    };
    processes.retire(s).await;
    v
}

/// The verdict of a call the host audited a violation on: its kind from
/// what was audited, the records quoted, and the fix for a line on stdout.
fn audited(method: &str, bad: &[String]) -> Verdict {
    let detail = format!(
        "expected: a clean answer to {method}; actual: the host audited {}",
        bad.join("; ")
    );
    let on_stdout = |event: &str| bad.iter().any(|b| b.starts_with(event));
    let kind = if on_stdout("plugin.protocol_violation") {
        crate::catalogue::Kind::ProtocolViolation
    } else if on_stdout("plugin.stdout_noise") {
        crate::catalogue::Kind::StdoutNoise
    } else {
        return Verdict::fail(detail);
    };
    Verdict::fail_as(
        kind,
        format!("{detail}\nfix: write logs and debugging output to stderr; stdout carries JSON-RPC messages only"),
    )
}
