//! `methods.*` and `config.update_accepted`: every declared method and tool
//! answers in time; tools answer a result for arguments generated from
//! their schema and `-32602` for arguments that break it.
//!
//! Tools are dispatched by agents, so every tool call carries a full agent
//! `_context` (see [`super::context`]); custom methods are daemon-level
//! calls. A well-formed error (e.g. `-32006 not_applicable` from a method
//! that needs a project) still counts as an answer for `methods.answers`.

use kaged_host_sim::audit::AuditEvent;
use kaged_host_sim::call::CallError;
use kaged_plugin_sdk::protocol::{
    methods, names::prefixed_tool_name, ErrorCode, PluginCallContext, INVALID_PARAMS,
    NOT_APPLICABLE, NOT_INITIALIZED,
};
use serde_json::{json, Value};

use super::context::{agent_ctx, describe};
use super::sessions::chain;
use super::{Suite, Verdict};
use crate::args::{invalid_args, valid_args};

/// Audit events that mean a call went wrong whatever it returned.
const BAD_EVENTS: [AuditEvent; 4] = [
    AuditEvent::ProtocolViolation,
    AuditEvent::Crashed,
    AuditEvent::Killed,
    AuditEvent::OversizeMessage,
];

pub(crate) async fn run(suite: &mut Suite<'_>) {
    let Some(m) = suite.manifest.clone() else {
        return;
    };
    for method in &m.methods {
        call_case(
            suite,
            "methods.answers",
            method,
            Some(json!({})),
            None,
            Expect::Answer,
        )
        .await;
    }
    for tool in &m.tools {
        let name = prefixed_tool_name(&m.name, &tool.name);
        let valid = valid_args(&tool.parameters_schema);
        let args = valid.clone().unwrap_or_else(|_| json!({}));
        let ctx = |what: &str| Some(agent_ctx(&format!("{}_{what}", tool.name)));
        call_case(
            suite,
            "methods.answers",
            &name,
            Some(args.clone()),
            ctx("answers"),
            Expect::Answer,
        )
        .await;
        match &valid {
            Ok(a) => {
                call_case(
                    suite,
                    "methods.tool_valid_args",
                    &name,
                    Some(a.clone()),
                    ctx("valid"),
                    Expect::Result,
                )
                .await
            }
            Err(e) => suite.record(
                "methods.tool_valid_args",
                format!("methods.tool_valid_args[{name}]"),
                Verdict::skip(format!(
                    "could not generate arguments from parameters_schema: {e}"
                )),
            ),
        }
        match invalid_args(&tool.parameters_schema) {
            Some(bad) => {
                let expect = Expect::InvalidParams { field: bad.field.clone(), how: bad.how.clone() };
                call_case(suite, "methods.tool_invalid_args", &name, Some(bad.args), ctx("invalid"), expect).await;
            }
            None => suite.record(
                "methods.tool_invalid_args",
                format!("methods.tool_invalid_args[{name}]"),
                Verdict::skip("could not generate arguments that break parameters_schema (it accepts every object, or the generator cannot satisfy it)"),
            ),
        }
    }
    if m.methods.is_empty() && m.tools.is_empty() {
        let why = "the manifest declares no methods and no tools";
        suite.record("methods.answers", "methods.answers", Verdict::skip(why));
    }
    if m.tools.is_empty() {
        let why = "the manifest declares no tools";
        suite.record(
            "methods.tool_valid_args",
            "methods.tool_valid_args",
            Verdict::skip(why),
        );
        suite.record(
            "methods.tool_invalid_args",
            "methods.tool_invalid_args",
            Verdict::skip(why),
        );
    }
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

async fn call_case(
    suite: &mut Suite<'_>,
    base: &str,
    method: &str,
    params: Option<Value>,
    ctx: Option<PluginCallContext>,
    expect: Expect,
) {
    let id = format!("{base}[{method}]");
    let Some(mut scope) = suite.begin(base, id) else {
        return;
    };
    let mark = suite.audit.len();
    let args = params
        .as_ref()
        .map(Value::to_string)
        .unwrap_or_else(|| "none".into());
    let shown = format!("{method}({args}) {}", describe(ctx.as_ref()));
    let r = match suite.shared(&mut scope).await {
        Err(e) => {
            suite.end(scope, Verdict::skip(format!("no session: {e}")));
            return;
        }
        Ok(s) => {
            let r = s.call(method, params, ctx).await;
            settle(s, &r).await;
            r
        }
    };
    let bad: Vec<&'static str> = suite
        .audit
        .since(mark)
        .iter()
        .filter(|e| BAD_EVENTS.contains(&e.event))
        .map(|e| e.event.as_str())
        .collect();
    let v = judge(method, &shown, r, &expect, &bad);
    suite.end(scope, v);
}

/// After a call that ended the plugin, wait (bounded) until the host has
/// handled the end, so that the next case starts a new session.
pub(crate) async fn settle(
    s: &kaged_host_sim::session::PluginSession,
    r: &Result<Value, CallError>,
) {
    if matches!(r, Err(CallError::Closed { .. })) {
        let t = s.timeouts();
        let _ = s
            .wait_exit(t.sigterm_grace.max(std::time::Duration::from_secs(1)))
            .await;
    }
}

/// The verdict of one call; `call` shows it (`method(args) as ...`).
fn judge(
    method: &str,
    call: &str,
    r: Result<Value, CallError>,
    expect: &Expect,
    bad: &[&str],
) -> Verdict {
    if let Err(CallError::Unavailable { .. }) = &r {
        return Verdict::skip(format!("{method} is marked unavailable by the host: the plugin did not list it in initialize (see handshake.methods_complete)"));
    }
    let broken = |what: String| {
        let mut d = what;
        if !bad.is_empty() {
            d.push_str(&format!(" (audit: {})", bad.join(", ")));
        }
        Verdict::fail(d)
    };
    match (expect, r) {
        (_, Err(CallError::Timeout { after, .. })) => broken(format!("expected: an answer within {after:?}; actual: none (the host kills the plugin)")),
        (_, Err(CallError::Closed { .. })) => broken(format!("expected: an answer to {method}; actual: the plugin ended before answering")),
        (_, _) if !bad.is_empty() => broken(format!("expected: a clean answer to {method}; actual: the host audited a violation")),
        (Expect::Answer, Ok(_)) => Verdict::pass(format!("{call} answered a result")),
        (Expect::Answer, Err(CallError::Plugin { error, .. })) => {
            Verdict::pass(format!("{call} answered a well-formed error {} {:?}", error.code, error.message))
        }
        (Expect::Result, Ok(v)) => Verdict::pass(format!("{call} answered {}", kaged_host_sim::transcript::cut(&v.to_string(), 200))),
        (Expect::Result, Err(CallError::Plugin { error, .. }))
            if ErrorCode::is_plugin_range(error.code) && ![NOT_APPLICABLE, NOT_INITIALIZED].contains(&error.code) =>
        {
            Verdict::pass(format!(
                "{call} accepted the arguments and answered a domain error {} {:?}",
                error.code, error.message
            ))
        }
        (Expect::Result, Err(CallError::Plugin { error, .. })) => Verdict::fail(format!(
            "expected: a result (or a domain error) for {call}, whose arguments satisfy parameters_schema; actual: error {} {:?}{}",
            error.code,
            error.message,
            match error.code {
                INVALID_PARAMS => " (the tool rejects arguments its schema accepts: the schema is incomplete)",
                NOT_APPLICABLE => " (a tool dispatched by an agent must apply to it)",
                _ => "",
            }
        )),
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
            kaged_host_sim::transcript::cut(&v.to_string(), 200)
        )),
        (_, Err(e)) => Verdict::fail(format!("expected: an answer to {method}; actual: {}", chain(&e))),
    }
}

/// `config.update_accepted`: a `config.update` built from `config_schema`
/// (`{}` without one) is answered with a result.
pub(crate) async fn config(suite: &mut Suite<'_>) {
    let Some(m) = suite.manifest.clone() else {
        return;
    };
    let Some(mut scope) = suite.begin("config.update_accepted", "config.update_accepted") else {
        return;
    };
    let (params, source) = match &m.config_schema {
        None => (Ok(json!({})), "no config_schema"),
        Some(schema) => (valid_args(schema), "valid for config_schema"),
    };
    let params = match params {
        Ok(p) => p,
        Err(e) => {
            suite.end(
                scope,
                Verdict::skip(format!(
                    "could not generate a config from config_schema: {e}"
                )),
            );
            return;
        }
    };
    let shown = params.to_string();
    let v = match suite.shared(&mut scope).await {
        Err(e) => Verdict::skip(format!("no session: {e}")),
        Ok(s) => match s.call(methods::CONFIG_UPDATE, Some(params), None).await {
            Ok(_) => Verdict::pass(format!("config.update {shown} accepted")),
            Err(CallError::Plugin { error, .. }) => Verdict::fail(format!(
                "expected: config.update {shown} ({source}) accepted; actual: error {} {:?}",
                error.code, error.message
            )),
            Err(e) => Verdict::fail(format!(
                "expected: config.update {shown} accepted; actual: {}",
                chain(&e)
            )),
        },
    };
    suite.end(scope, v);
}
