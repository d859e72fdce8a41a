//! `protocol.ping_during_slow_call`: while the plugin works on calls, a
//! ping is still answered within the ping timeout (the supervisor kills a
//! plugin after 3 missed pings, however busy it is).

use std::time::Instant;

use kaged_host_core::RequestError;
use kaged_plugin_protocol::{inject_context, methods};
use serde_json::{json, Value};

use super::hooks;
use crate::profile::Loaded;
use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::Target;
use crate::runner::session::call_context::agent_ctx;
use crate::runner::session::context::RunContext;
use crate::runner::session::probe::{is_answer, or_stray, stray_detail, wait_for, Waited};
use crate::runner::session::processes::LaneProcesses;
use crate::schema_args::args_from_schema;

/// The raw ids of the calls that keep the plugin busy (integers: string
/// ids are `protocol.ids_echoed`'s business).
fn busy_id(i: usize) -> Value {
    json!(770_001 + i)
}

/// `protocol.ping_during_slow_call`: every declared custom method is
/// called (its first profile example, else `{}`), every tool with
/// arguments generated from its schema as an agent, every subscribed hook
/// fired (as `hooks.answers` fires it), then, without waiting, ping; the
/// ping must be answered within the ping timeout whatever the calls do.
/// When every call was answered with an error (a refusal does no work),
/// none was slow: the case says so and skips.
pub(crate) async fn ping_during_slow_call(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let m = &ctx.manifest;
    // Calls that do real work: a custom method's first profile example
    // (else `{}`), a tool's arguments generated from its schema with an
    // agent's full context, each hook as `hooks.answers` fires it.
    let example = |method: &str| match &ctx.profile {
        Loaded::Valid(p) => p
            .method(method)
            .and_then(|mp| mp.examples.first())
            .map(|e| e.params.clone()),
        _ => None,
    };
    let calls: Vec<(String, Value)> = m
        .methods
        .iter()
        .filter(|method| !m.is_prefixed_tool(method))
        .map(|method| (method.clone(), example(method).unwrap_or_else(|| json!({}))))
        .chain(m.tools.iter().map(|t| {
            let method = format!("{}.{}", m.name, t.name);
            let args = args_from_schema(&t.parameters_schema).unwrap_or_else(|_| json!({}));
            let params = inject_context(Some(args), &agent_ctx(&format!("{}_busy", t.name)));
            (method, params)
        }))
        .chain(m.hook_names().into_iter().map(|h| {
            let params = inject_context(Some(hooks::params_for(h)), &hooks::call_ctx(h));
            (h.method().to_string(), params)
        }))
        .collect();
    if calls.is_empty() {
        return Verdict::skip(
            "the manifest declares no custom method, tool or hook to keep the plugin busy with",
        );
    }
    let busy: Vec<&str> = calls.iter().map(|(m, _)| m.as_str()).collect();
    let s = match processes.shared(ctx, scope).await {
        Ok(s) => s,
        Err(e) => return Verdict::no_session(e),
    };
    let (limit, request) = (ctx.timeouts.ping, ctx.timeouts.request);
    let raw = s.raw();
    let mut rx = raw.inbound();
    for (i, (method, params)) in calls.iter().enumerate() {
        raw.send_value(
            &json!({"jsonrpc": "2.0", "id": busy_id(i), "method": method, "params": params}),
        );
    }
    let started = Instant::now();
    let pinged = or_stray(&raw, raw.request(methods::PING, None, limit)).await;
    let took = started.elapsed();
    // Which calls were answered by the time ping was; then wait for the
    // rest (an unanswered call is methods.answers' business).
    let mut open: Vec<Value> = (0..busy.len()).map(busy_id).collect();
    let mut seen = Vec::new();
    let mut answered_first = 0;
    // Calls answered with a result did work; an error answer (a refusal)
    // did none, and cannot have kept the plugin busy.
    let mut worked = 0;
    while let Ok(v) = rx.try_recv() {
        if is_answer(&v) && v.get("id").is_some_and(|id| open.contains(id)) {
            open.retain(|id| v.get("id") != Some(id));
            answered_first += 1;
            worked += usize::from(v.get("result").is_some());
        }
    }
    let deadline = tokio::time::Instant::now() + request;
    while !open.is_empty() {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match wait_for(&raw, &mut rx, left, &mut seen, |v| {
            is_answer(v) && v.get("id").is_some_and(|id| open.contains(id))
        })
        .await
        {
            Waited::Found(v) => {
                worked += usize::from(v.get("result").is_some());
                open.retain(|id| v.get("id") != Some(id));
            }
            Waited::Stray(_) | Waited::Silence => break,
        }
    }
    let calls = busy.join(", ");
    let in_flight = busy.len() - answered_first;
    match pinged {
        Err(v) => Verdict::fail(stray_detail(&format!("an answer to ping while {calls} ran"), &v)),
        Ok(Ok(_)) if worked == 0 => Verdict::skip(format!(
            "none of the calls ({calls}) did work: each was answered with an error, so nothing \
             was slow to overlap (ping answered in {} ms)",
            took.as_millis()
        )),
        Ok(Ok(_)) => Verdict::pass(format!(
            "ping answered in {} ms while the calls ({calls}) were sent before it ({worked} answered a result, {in_flight} after the ping)",
            took.as_millis()
        )),
        Ok(Err(RequestError::Closed)) => Verdict::skip(format!(
            "the plugin's stdout closed while {calls} ran: it ended (see methods.answers)"
        )),
        // It ended while the calls ran (the host killed it for what it
        // sent): whether ping timed out first is a race with that kill.
        Ok(Err(RequestError::Timeout(_))) if !s.is_running() => Verdict::skip(format!(
            "the plugin's stdout closed while {calls} ran: it ended (see methods.answers)"
        )),
        Ok(Err(RequestError::Timeout(_))) => Verdict::fail(format!(
            "expected: ping answered within the ping timeout ({limit:?}) while {calls} ran; actual: no answer in time (the supervisor kills a plugin after 3 missed pings)"
        )),
        Ok(Err(e)) => Verdict::fail(format!(
            "expected: ping answered {{\"status\": \"ok\"}} while {calls} ran; actual: {e}"
        )),
    }
}
