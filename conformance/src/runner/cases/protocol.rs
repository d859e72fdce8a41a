//! `protocol.*`: ping, unknown methods, calls before `initialized`,
//! batches, malformed JSON, id echo, concurrency. Batches, malformed JSON
//! and early calls use fresh spawns; the rest the shared session.

use std::time::Duration;

use kaged_host_sim::connection::RequestError;
use kaged_plugin_sdk::protocol::{
    methods, INVALID_REQUEST, METHOD_NOT_FOUND, NOT_INITIALIZED, PARSE_ERROR,
};
use serde_json::{json, Value};
use tokio::sync::broadcast;

use super::case::Scope;
use super::sessions::retire;
use super::{Suite, Verdict};

/// A method no plugin declares.
const UNKNOWN_METHOD: &str = "conformance.no_such_method";

pub(crate) async fn run(suite: &mut Suite<'_>) {
    shared_case(suite, "protocol.ping", ping).await;
    shared_case(suite, "protocol.unknown_method", unknown_method).await;
    if let Some(mut scope) = suite.begin("protocol.not_initialized", "protocol.not_initialized") {
        let v = not_initialized(suite, &mut scope).await;
        suite.end(scope, v);
    }
    if let Some(mut scope) = suite.begin("protocol.batch_rejected", "protocol.batch_rejected") {
        let line = br#"[{"jsonrpc":"2.0","id":"conformance-batch-1","method":"ping"},{"jsonrpc":"2.0","id":"conformance-batch-2","method":"ping"}]"#;
        let v = rejected_line(suite, &mut scope, line, INVALID_REQUEST, "a batch").await;
        suite.end(scope, v);
    }
    if let Some(mut scope) = suite.begin("protocol.parse_error", "protocol.parse_error") {
        let line = br#"{"jsonrpc": "2.0", "id": 4711, "method": "ping", "params": {"#;
        let v = rejected_line(suite, &mut scope, line, PARSE_ERROR, "malformed JSON").await;
        suite.end(scope, v);
    }
    shared_case(suite, "protocol.ids_echoed", ids_echoed).await;
    shared_case(suite, "protocol.concurrent_calls", concurrent).await;
}

type CaseFn = for<'s> fn(
    &'s kaged_host_sim::session::PluginSession,
    Duration,
) -> futures_util::future::BoxFuture<'s, Verdict>;

async fn shared_case(suite: &mut Suite<'_>, id: &str, f: CaseFn) {
    let Some(mut scope) = suite.begin(id, id) else {
        return;
    };
    let limit = suite.timeouts().request;
    let v = match suite.shared(&mut scope).await {
        Err(e) => Verdict::skip(format!("no session: {e}")),
        Ok(s) => f(s, limit).await,
    };
    suite.end(scope, v);
}

/// Wait up to `limit` for an inbound message matching `pred`; every JSON
/// message seen is pushed to `seen`.
pub(crate) async fn wait_for(
    rx: &mut broadcast::Receiver<Value>,
    limit: Duration,
    seen: &mut Vec<Value>,
    mut pred: impl FnMut(&Value) -> bool,
) -> Option<Value> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Err(_) | Ok(Err(broadcast::error::RecvError::Closed)) => return None,
            Ok(Err(broadcast::error::RecvError::Lagged(_))) => continue,
            Ok(Ok(v)) => {
                seen.push(v.clone());
                if pred(&v) {
                    return Some(v);
                }
            }
        }
    }
}

fn ping(
    s: &kaged_host_sim::session::PluginSession,
    _limit: Duration,
) -> futures_util::future::BoxFuture<'_, Verdict> {
    Box::pin(async move {
        match s.ping().await {
            Ok(()) => Verdict::pass("ping answered {\"status\": \"ok\"}"),
            Err(e) => Verdict::fail(format!(
                "expected: {{\"status\": \"ok\"}}; actual: {}",
                super::sessions::chain(&e)
            )),
        }
    })
}

fn unknown_method(
    s: &kaged_host_sim::session::PluginSession,
    limit: Duration,
) -> futures_util::future::BoxFuture<'_, Verdict> {
    Box::pin(async move {
        match s
            .raw()
            .request(UNKNOWN_METHOD, Some(json!({})), limit)
            .await
        {
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
    })
}

async fn not_initialized(suite: &mut Suite<'_>, scope: &mut Scope) -> Verdict {
    let t = suite.timeouts();
    let params = suite.init_params();
    let s = match suite.spawn_unready(scope).await {
        Ok(s) => s,
        Err(e) => return Verdict::skip(format!("no session: {e}")),
    };
    let raw = s.raw();
    let init = serde_json::to_value(params).unwrap_or(Value::Null);
    let verdict = match raw
        .request(methods::INITIALIZE, Some(init), t.initialize)
        .await
    {
        Ok(_) | Err(RequestError::Rpc(_)) => {
            // ping: a call with no side effects (a declared method could crash or hang).
            let method = methods::PING;
            match raw.request(method, None, t.request).await {
                Err(RequestError::Rpc(e)) if e.code == NOT_INITIALIZED => Verdict::pass(format!("{method} before initialized answered -32002")),
                Err(RequestError::Rpc(e)) => Verdict::fail(format!("expected: {method} before initialized answered -32002; actual: error {} {:?}", e.code, e.message)),
                Ok(v) => Verdict::fail(format!("expected: {method} before initialized answered -32002; actual: it was processed: result {}", kaged_host_sim::transcript::cut(&v.to_string(), 200))),
                Err(e) => Verdict::fail(format!("expected: {method} before initialized answered -32002; actual: {e}")),
            }
        }
        Err(e) => Verdict::skip(format!("initialize was not answered: {e}")),
    };
    retire(s).await;
    verdict
}

/// Send `line` on a fresh spawn; expect an error `code` with id null, and
/// the plugin still answering ping afterwards.
async fn rejected_line(
    suite: &mut Suite<'_>,
    scope: &mut Scope,
    line: &[u8],
    code: i64,
    what: &str,
) -> Verdict {
    let limit = suite.timeouts().request;
    let s = match suite.fresh(scope).await {
        Ok(s) => s,
        Err(e) => return Verdict::skip(format!("no session: {e}")),
    };
    let mut rx = s.raw().inbound();
    s.raw().send_line(line);
    let mut seen = Vec::new();
    let answer = wait_for(&mut rx, limit, &mut seen, |v| {
        v.get("id").is_some_and(Value::is_null) && v.get("error").is_some()
    })
    .await;
    let verdict = match answer {
        None => Verdict::fail(format!(
            "expected: error {code} with id null for {what}; actual: no such answer within {limit:?}{}",
            if seen.is_empty() { String::new() } else { format!(" (saw: {})", brief(&seen)) }
        )),
        Some(a) if a["error"]["code"].as_i64() != Some(code) => {
            Verdict::fail(format!("expected: error {code} with id null for {what}; actual: {a}"))
        }
        // Any answer to a later ping shows the plugin kept working (what it
        // answers is protocol.ping's business).
        Some(_) => match s.raw().request(methods::PING, None, limit).await {
            Ok(_) | Err(RequestError::Rpc(_)) => Verdict::pass(format!("{what} answered {code} with id null; a later ping was still answered")),
            Err(e) => Verdict::fail(format!("expected: the plugin keeps working after {what}; actual: a later ping got {e}")),
        },
    };
    retire(s).await;
    verdict
}

fn brief(seen: &[Value]) -> String {
    let v: Vec<String> = seen
        .iter()
        .take(3)
        .map(|v| kaged_host_sim::transcript::cut(&v.to_string(), 120))
        .collect();
    v.join(", ")
}

fn ids_echoed(
    s: &kaged_host_sim::session::PluginSession,
    limit: Duration,
) -> futures_util::future::BoxFuture<'_, Verdict> {
    Box::pin(async move {
        let ids = [
            json!(9_007_199_254_740_u64),
            json!("conformance-id-\u{e9}-7"),
        ];
        let mut rx = s.raw().inbound();
        for id in &ids {
            s.raw()
                .send_value(&json!({"jsonrpc": "2.0", "id": id, "method": methods::PING}));
        }
        let mut missing: Vec<Value> = ids.to_vec();
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + limit;
        while !missing.is_empty() {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let found = wait_for(&mut rx, left, &mut seen, |v| {
                v.get("result").is_some() || v.get("error").is_some()
            })
            .await;
            match found {
                Some(v) => missing.retain(|id| v.get("id") != Some(id)),
                None => break,
            }
        }
        if missing.is_empty() {
            Verdict::pass("integer and string ids were echoed exactly")
        } else {
            let answers: Vec<Value> = seen
                .iter()
                .filter(|v| v.get("result").is_some() || v.get("error").is_some())
                .cloned()
                .collect();
            Verdict::fail(format!(
                "expected: answers with ids {}; actual: no answer echoing {} within {limit:?} (answers seen: {})",
                ids.iter().map(Value::to_string).collect::<Vec<_>>().join(" and "),
                missing.iter().map(Value::to_string).collect::<Vec<_>>().join(", "),
                if answers.is_empty() { "none".to_string() } else { brief(&answers) }
            ))
        }
    })
}

fn concurrent(
    s: &kaged_host_sim::session::PluginSession,
    limit: Duration,
) -> futures_util::future::BoxFuture<'_, Verdict> {
    Box::pin(async move {
        let ids: Vec<u64> = (880_001..=880_010).collect();
        let mut rx = s.raw().inbound();
        for id in &ids {
            s.raw()
                .send_value(&json!({"jsonrpc": "2.0", "id": id, "method": methods::PING}));
        }
        let mut missing = ids.clone();
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + limit;
        while !missing.is_empty() {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match wait_for(&mut rx, left, &mut seen, |v| {
                v.get("id").and_then(Value::as_u64).is_some()
            })
            .await
            {
                Some(v) => missing.retain(|id| v["id"].as_u64() != Some(*id)),
                None => break,
            }
        }
        if missing.is_empty() {
            Verdict::pass("10 pings sent without waiting were all answered")
        } else {
            Verdict::fail(format!("expected: all 10 calls answered; actual: {} unanswered within {limit:?} (ids {missing:?})", missing.len()))
        }
    })
}
