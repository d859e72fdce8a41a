//! `protocol.*` (but the whole-run observations): ping, unknown methods,
//! calls before `initialized`, batches, malformed JSON, id echo,
//! concurrency. Batches, malformed JSON and early calls use fresh spawns;
//! the rest the shared session. Every probe ends at its first wrong answer
//! ([`crate::runner::session::probe`]); only silence waits out the timeout.

use std::time::Duration;

use kaged_host_core::PluginHandle;
use kaged_host_core::RequestError;
use kaged_plugin_protocol::{
    methods, INVALID_REQUEST, METHOD_NOT_FOUND, NOT_INITIALIZED, PARSE_ERROR,
};
use serde_json::{json, Value};

use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::Target;
use crate::runner::session::context::RunContext;
use crate::runner::session::probe::{
    brief, is_answer, is_stray, or_stray, stray_detail, wait_for, Waited,
};
use crate::runner::session::processes::LaneProcesses;
use kaged_plugin_protocol::error_chain::chain as error_chain;

/// A method no plugin declares.
const UNKNOWN_METHOD: &str = "conformance.no_such_method";

/// `protocol.ping`: ping answers `{"status": "ok"}`.
pub(crate) async fn ping(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let s = match processes.shared(ctx, scope).await {
        Ok(s) => s,
        Err(e) => return Verdict::no_session(e),
    };
    match or_stray(&s.raw(), s.ping()).await {
        Ok(Ok(())) => Verdict::pass("ping answered {\"status\": \"ok\"}"),
        Ok(Err(e)) => Verdict::fail(format!(
            "expected: {{\"status\": \"ok\"}}; actual: {}",
            error_chain(&e)
        )),
        Err(v) => Verdict::fail(stray_detail("an answer to ping", &v)),
    }
}

/// `protocol.unknown_method`: an unknown method gets -32601.
pub(crate) async fn unknown_method(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let limit = ctx.timeouts.request;
    let s = match processes.shared(ctx, scope).await {
        Ok(s) => s,
        Err(e) => return Verdict::no_session(e),
    };
    let raw = s.raw();
    let answer = or_stray(&raw, raw.request(UNKNOWN_METHOD, Some(json!({})), limit)).await;
    let answer = match answer {
        Ok(a) => a,
        Err(v) => return Verdict::fail(stray_detail("error -32601", &v)),
    };
    match answer {
        Err(RequestError::Rpc(e)) if e.code == METHOD_NOT_FOUND => {
            Verdict::pass(format!("{UNKNOWN_METHOD} answered -32601 {:?}", e.message))
        }
        Err(RequestError::Rpc(e)) => Verdict::fail(format!(
            "expected: error -32601; actual: error {} {:?}",
            e.code, e.message
        )),
        Ok(v) => Verdict::fail(format!("expected: error -32601; actual: result {v}")),
        Err(e) => Verdict::fail(format!("expected: error -32601; actual: {e}")),
    }
}

/// `protocol.not_initialized`: a call between `initialize` and
/// `initialized` gets -32002 (on a spawn without the handshake).
pub(crate) async fn not_initialized(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let t = &ctx.timeouts;
    let s = match processes.spawn_unready(ctx, scope).await {
        Ok(s) => s,
        Err(e) => return Verdict::no_session(e),
    };
    let raw = s.raw();
    let init = serde_json::to_value(ctx.init_params()).unwrap_or(Value::Null);
    let verdict = match raw
        .request(methods::INITIALIZE, Some(init), t.initialize)
        .await
    {
        Ok(_) | Err(RequestError::Rpc(_)) => {
            // ping: a call with no side effects (a declared method could crash or hang).
            let method = methods::PING;
            match or_stray(&raw, raw.request(method, None, t.request)).await {
                Err(v) => Verdict::fail(stray_detail(&format!("{method} before initialized answered -32002"), &v)),
                Ok(answer) => match answer {
                Err(RequestError::Rpc(e)) if e.code == NOT_INITIALIZED => Verdict::pass(format!("{method} before initialized answered -32002")),
                Err(RequestError::Rpc(e)) => Verdict::fail(format!("expected: {method} before initialized answered -32002; actual: error {} {:?}", e.code, e.message)),
                Ok(v) => Verdict::fail(format!("expected: {method} before initialized answered -32002; actual: it was processed: result {}", kaged_plugin_protocol::text::cut(&v.to_string(), 200))),
                Err(e) => Verdict::fail(format!("expected: {method} before initialized answered -32002; actual: {e}")),
                },
            }
        }
        Err(e) => Verdict::skip(format!("initialize was not answered: {e}")),
    };
    processes.retire(s).await;
    verdict
}

/// `protocol.batch_rejected`: a batch gets -32600 with id null, and the
/// plugin keeps working.
pub(crate) async fn batch_rejected(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let line = br#"[{"jsonrpc":"2.0","id":"conformance-batch-1","method":"ping"},{"jsonrpc":"2.0","id":"conformance-batch-2","method":"ping"}]"#;
    rejected_line(ctx, processes, scope, line, INVALID_REQUEST, "a batch").await
}

/// `protocol.parse_error`: malformed JSON gets -32700 with id null, and
/// the plugin keeps working.
pub(crate) async fn parse_error(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let line = br#"{"jsonrpc": "2.0", "id": 4711, "method": "ping", "params": {"#;
    rejected_line(ctx, processes, scope, line, PARSE_ERROR, "malformed JSON").await
}

/// Send `line` on a fresh spawn; expect an error `code` with id null, and
/// the plugin still answering ping afterwards.
async fn rejected_line(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    line: &[u8],
    code: i64,
    what: &str,
) -> Verdict {
    let limit = ctx.timeouts.request;
    let s = match processes.fresh(ctx, scope).await {
        Ok(s) => s,
        Err(e) => return Verdict::no_session(e),
    };
    let raw = s.raw();
    let mut rx = raw.inbound();
    raw.send_line(line);
    let mut seen = Vec::new();
    // On a fresh spawn nothing else is asked: the first answer to nothing
    // the host sent is the answer to the line, right or wrong.
    let answer = wait_for(&raw, &mut rx, limit, &mut seen, |v| is_stray(&raw, v)).await;
    let expected = format!("error {code} with id null for {what}");
    let verdict = match answer {
        Waited::Silence => Verdict::fail(format!(
            "expected: {expected}; actual: no such answer within {limit:?}{}",
            if seen.is_empty() {
                String::new()
            } else {
                format!(" (saw: {})", brief(&seen))
            }
        )),
        Waited::Found(a) | Waited::Stray(a)
            if !(a.get("id").is_some_and(Value::is_null)
                && a["error"]["code"].as_i64() == Some(code)) =>
        {
            Verdict::fail(format!(
                "expected: {expected}; actual: {}",
                kaged_plugin_protocol::text::cut(&a.to_string(), 200)
            ))
        }
        // Any answer to a later ping shows the plugin kept working (what it
        // answers is protocol.ping's business).
        Waited::Found(_) | Waited::Stray(_) => {
            match or_stray(&raw, raw.request(methods::PING, None, limit)).await {
                Ok(Ok(_)) | Ok(Err(RequestError::Rpc(_))) => Verdict::pass(format!(
                    "{what} answered {code} with id null; a later ping was still answered"
                )),
                Ok(Err(e)) => Verdict::fail(format!(
                    "expected: the plugin keeps working after {what}; actual: a later ping got {e}"
                )),
                Err(v) => Verdict::fail(stray_detail(
                    &format!("the plugin keeps working after {what}, answering a later ping"),
                    &v,
                )),
            }
        }
    };
    processes.retire(s).await;
    verdict
}

/// `protocol.ids_echoed`: integer and string ids are echoed exactly.
pub(crate) async fn ids_echoed(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let limit = ctx.timeouts.request;
    let s = match processes.shared(ctx, scope).await {
        Ok(s) => s,
        Err(e) => return Verdict::no_session(e),
    };
    echoes(s, limit).await
}

async fn echoes(s: &PluginHandle, limit: Duration) -> Verdict {
    let ids = [
        json!(9_007_199_254_740_u64),
        json!("conformance-id-\u{e9}-7"),
    ];
    let raw = s.raw();
    let mut rx = raw.inbound();
    for id in &ids {
        raw.send_value(&json!({"jsonrpc": "2.0", "id": id, "method": methods::PING}));
    }
    let mut missing: Vec<Value> = ids.to_vec();
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + limit;
    let expected = format!(
        "answers with ids {}",
        ids.iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(" and ")
    );
    while !missing.is_empty() {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let found = wait_for(&raw, &mut rx, left, &mut seen, |v| {
            is_answer(v) && v.get("id").is_some_and(|id| missing.contains(id))
        })
        .await;
        match found {
            Waited::Found(v) => missing.retain(|id| v.get("id") != Some(id)),
            Waited::Stray(v) => return Verdict::fail(stray_detail(&expected, &v)),
            Waited::Silence => break,
        }
    }
    if missing.is_empty() {
        Verdict::pass("integer and string ids were echoed exactly")
    } else {
        let answers: Vec<Value> = seen.iter().filter(|v| is_answer(v)).cloned().collect();
        Verdict::fail(format!(
            "expected: {expected}; actual: no answer echoing {} within {limit:?} (answers seen: {})",
            missing.iter().map(Value::to_string).collect::<Vec<_>>().join(", "),
            if answers.is_empty() { "none".to_string() } else { brief(&answers) }
        ))
    }
}

/// `protocol.concurrent_calls`: 10 pings sent without waiting are all
/// answered.
pub(crate) async fn concurrent_calls(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let limit = ctx.timeouts.request;
    let s = match processes.shared(ctx, scope).await {
        Ok(s) => s,
        Err(e) => return Verdict::no_session(e),
    };
    concurrent(s, limit).await
}

async fn concurrent(s: &PluginHandle, limit: Duration) -> Verdict {
    let ids: Vec<u64> = (880_001..=880_010).collect();
    let raw = s.raw();
    let mut rx = raw.inbound();
    for id in &ids {
        raw.send_value(&json!({"jsonrpc": "2.0", "id": id, "method": methods::PING}));
    }
    let mut missing = ids.clone();
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + limit;
    while !missing.is_empty() {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let found = wait_for(&raw, &mut rx, left, &mut seen, |v| {
            is_answer(v)
                && v.get("id")
                    .and_then(Value::as_u64)
                    .is_some_and(|id| missing.contains(&id))
        })
        .await;
        match found {
            Waited::Found(v) => missing.retain(|id| v["id"].as_u64() != Some(*id)),
            Waited::Stray(v) => {
                return Verdict::fail(stray_detail("all 10 calls answered, each with its id", &v))
            }
            Waited::Silence => break,
        }
    }
    if missing.is_empty() {
        Verdict::pass("10 pings sent without waiting were all answered")
    } else {
        Verdict::fail(format!("expected: all 10 calls answered; actual: {} unanswered within {limit:?} (ids {missing:?})", missing.len()))
    }
}
