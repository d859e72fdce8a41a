//! The API's handlers.

use std::convert::Infallible;

use axum::body::Bytes;
use axum::extract::{Path, Query};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::IntoResponse;
use axum::Json;
use futures_util::Stream;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;

use super::super::status::PluginStatus;
use super::cell::Current;
use super::error::ApiError;
use super::reserved;

/// `?agent=PATH[&session=ID]`.
#[derive(Debug, Deserialize)]
pub(super) struct AgentQuery {
    agent: Option<String>,
    session: Option<String>,
}

pub(super) async fn list(Current(d): Current) -> Json<Vec<PluginStatus>> {
    Json(d.status())
}

pub(super) async fn history(
    Current(d): Current,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let history = d.history(&name)?;
    Ok(Json(json!({"plugin": name, "history": history})))
}

/// The header naming who asks; the call's `_context.operator_id`
/// (ADDENDUM §16).
pub(super) const USER_ID_HEADER: &str = "x-kaged-user-id";

/// The `X-Kaged-User-Id` of `headers`: visible ASCII, 1 to 128 characters,
/// or a 400 naming what is wrong.
fn operator_of(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(v) = headers.get(USER_ID_HEADER) else {
        return Ok(None);
    };
    match v.to_str() {
        Ok(s) if !s.is_empty() && s.len() <= 128 && s.bytes().all(|b| b.is_ascii_graphic()) => {
            Ok(Some(s.to_string()))
        }
        _ => Err(ApiError::bad_request(
            "X-Kaged-User-Id must be 1 to 128 visible ASCII characters (no spaces)",
        )),
    }
}

pub(super) async fn call_post(
    Current(d): Current,
    Path((name, method)): Path<(String, String)>,
    Query(q): Query<AgentQuery>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    reserved::check(&method)?;
    let operator = operator_of(&headers)?;
    let params = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        Some(parse_json(&body)?)
    };
    let out = d
        .call(
            &name,
            &method,
            params,
            q.agent.as_deref(),
            q.session.as_deref(),
            operator.as_deref(),
        )
        .await?;
    Ok(Json(out))
}

pub(super) async fn knobs(
    Current(d): Current,
    Path(name): Path<String>,
    Query(q): Query<AgentQuery>,
) -> Result<Json<Value>, ApiError> {
    let knobs = d.knobs(&name, q.agent.as_deref()).await?;
    Ok(Json(
        json!({"plugin": name, "agent_path": q.agent, "knobs": knobs}),
    ))
}

pub(super) async fn write_knob(
    Current(d): Current,
    Path((name, knob)): Path<(String, String)>,
    Query(q): Query<AgentQuery>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let value = match parse_json(&body)? {
        Value::Object(mut o) if o.contains_key("value") => o.remove("value").unwrap_or_default(),
        _ => return Err(ApiError::bad_request(r#"the body must be {"value": V}"#)),
    };
    let config = d
        .write_knob(&name, &knob, value, q.agent.as_deref())
        .await?;
    Ok(Json(
        json!({"plugin": name, "knob": knob, "agent_path": q.agent, "config": config}),
    ))
}

pub(super) async fn operate(
    Current(d): Current,
    Path((name, action)): Path<(String, String)>,
) -> Result<Json<PluginStatus>, ApiError> {
    let status = match action.as_str() {
        "enable" => d.enable(&name).await?,
        "disable" => d.disable(&name).await?,
        "restart" => d.restart(&name).await?,
        other => {
            return Err(ApiError {
                status: StatusCode::NOT_FOUND,
                code: json!("unknown_action"),
                message: format!("no action {other:?}: use enable, disable or restart"),
            })
        }
    };
    Ok(Json(status))
}

pub(super) async fn audit_stream(
    Current(d): Current,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = d.host().audit().subscribe();
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(record) => {
                    let event = Event::default()
                        .event(record.event.as_str())
                        .data(record.to_json().to_string());
                    return Some((Ok(event), rx));
                }
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "audit stream lagged");
                }
                Err(RecvError::Closed) => return None,
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// Any method but POST on `/call/`: calls change state, so they are
/// never a GET (nor anything a link or an `<img>` could send).
pub(super) async fn call_not_post() -> impl IntoResponse {
    let error = ApiError {
        status: StatusCode::METHOD_NOT_ALLOWED,
        code: json!("method_not_allowed"),
        message: "a call is a POST (the params as a JSON body)".into(),
    };
    ([(header::ALLOW, "POST")], error)
}

pub(super) async fn not_found() -> ApiError {
    ApiError {
        status: StatusCode::NOT_FOUND,
        code: json!("not_found"),
        message: "no such endpoint (see GET /api/v1/plugins)".into(),
    }
}

fn parse_json(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("malformed JSON body: {e}")))
}
