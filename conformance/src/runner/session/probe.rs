//! Probing without waiting longer than needed: a case ends the moment its
//! outcome is certain. The full timeout is only for silence; an answer
//! that answers nothing the host sent (an id never sent, id null, a batch
//! of answers)
//! ends the wait at once and is what the case judges.
//!
//! [`wait_for`] watches the plugin's stdout for a message; [`or_stray`]
//! runs a host request or call and ends it early on a stray answer.

use std::future::Future;
use std::time::Duration;

use kaged_host_core::RawChannel;
use serde_json::Value;
use tokio::sync::broadcast;

/// Whether `v` is an answer: a response (a `result` or an `error`, no
/// `method`), or a batch holding one (a batch of requests or
/// notifications the plugin sends on its own answers nothing).
pub(crate) fn is_answer(v: &Value) -> bool {
    let response = |v: &Value| {
        v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some())
    };
    match v {
        Value::Array(items) => items.iter().any(response),
        _ => response(v),
    }
}

/// Whether `v` is an answer to nothing the host sent: a batch of answers,
/// or a response whose id is null, missing or was never sent.
pub(crate) fn is_stray(raw: &RawChannel, v: &Value) -> bool {
    is_answer(v)
        && (v.is_array()
            || v.get("id")
                .is_none_or(|id| id.is_null() || !raw.was_sent(id)))
}

/// What a wait on the plugin's stdout ended with.
#[derive(Debug)]
pub(crate) enum Waited {
    /// The message looked for.
    Found(Value),
    /// An answer to nothing the host sent, before it.
    Stray(Value),
    /// Nothing matching within the limit (or the plugin's stdout closed).
    Silence,
}

/// Wait up to `limit` for a message matching `pred`, ending early on a
/// stray answer ([`is_stray`]) that `pred` does not match; every JSON
/// message seen is pushed to `seen`.
pub(crate) async fn wait_for(
    raw: &RawChannel,
    rx: &mut broadcast::Receiver<Value>,
    limit: Duration,
    seen: &mut Vec<Value>,
    mut pred: impl FnMut(&Value) -> bool,
) -> Waited {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Err(_) | Ok(Err(broadcast::error::RecvError::Closed)) => return Waited::Silence,
            Ok(Err(broadcast::error::RecvError::Lagged(_))) => continue,
            Ok(Ok(v)) => {
                seen.push(v.clone());
                if pred(&v) {
                    return Waited::Found(v);
                }
                if is_stray(raw, &v) {
                    return Waited::Stray(v);
                }
            }
        }
    }
}

/// Run `fut` (a request or call whose answer the host routes by id) until
/// it ends, or until the plugin sends a stray answer ([`is_stray`]),
/// whichever comes first: `Err` holds the stray answer.
pub(crate) async fn or_stray<T>(
    raw: &RawChannel,
    fut: impl Future<Output = T>,
) -> Result<T, Value> {
    let mut rx = raw.inbound();
    let stray = async {
        loop {
            match rx.recv().await {
                Ok(v) if is_stray(raw, &v) => return v,
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => {
                    return std::future::pending::<Value>().await
                }
            }
        }
    };
    tokio::select! {
        biased;
        done = fut => Ok(done),
        v = stray => Err(v),
    }
}

/// The detail of a case a stray answer ended: what was expected, and what
/// arrived instead.
pub(crate) fn stray_detail(expected: &str, v: &Value) -> String {
    format!(
        "expected: {expected}; actual: an answer to no request the host sent, at once: {}",
        kaged_plugin_protocol::text::cut(&v.to_string(), 200)
    )
}

/// Up to three messages, cut, for a detail.
pub(crate) fn brief(seen: &[Value]) -> String {
    let v: Vec<String> = seen
        .iter()
        .take(3)
        .map(|v| kaged_plugin_protocol::text::cut(&v.to_string(), 120))
        .collect();
    v.join(", ")
}
