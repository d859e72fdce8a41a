//! The consent requests of a pending project (`daemon::pending`):
//! `GET /api/v1/pending`, `POST /api/v1/pending/{plugin}/approve` and
//! `POST /api/v1/pending/{plugin}/refuse`.

use axum::extract::Path;
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};

use super::super::pending::PendingError;
use super::cell::Current;
use super::error::ApiError;
use kaged_host_core::audit::{current_request_id, with_request_id_blocking};

/// Every request still pending, with the project's state:
/// `{"project": "pending"|"loaded"|null, "pending": [...]}`.
pub(super) async fn list(Current(d): Current) -> Json<Value> {
    let (state, pending) = match (d.pending(), d.project()) {
        (Some(p), _) => (json!("pending"), json!(p.list())),
        (None, Some(_)) => (json!("loaded"), json!([])),
        (None, None) => (Value::Null, json!([])),
    };
    Json(json!({"project": state, "pending": pending}))
}

/// Approve or refuse one request.
pub(super) async fn decide(
    Current(d): Current,
    Path((plugin, action)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let Some(pending) = d.pending().cloned() else {
        return Err(unknown(&plugin));
    };
    let request = current_request_id();
    let answer = match action.as_str() {
        "approve" => {
            let name = plugin.clone();
            // git and the copy block: off the runtime, in the request's name.
            let done = tokio::task::spawn_blocking(move || {
                with_request_id_blocking(request, || pending.approve(&name))
            })
            .await
            .map_err(|e| ApiError {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                code: json!("internal"),
                message: format!("the approval did not finish: {e}"),
            })?;
            match done.map_err(|e| from_pending(&e))? {
                Some(view) => json!({"plugin": plugin, "installed": false, "request": view}),
                None => json!({"plugin": plugin, "installed": true, "request": null}),
            }
        }
        "refuse" => {
            let view = pending.refuse(&plugin).map_err(|e| from_pending(&e))?;
            json!({"plugin": plugin, "installed": false, "request": view})
        }
        other => {
            return Err(ApiError {
                status: StatusCode::NOT_FOUND,
                code: json!("unknown_action"),
                message: format!("no action {other:?}: use approve or refuse"),
            })
        }
    };
    Ok(Json(answer))
}

fn unknown(plugin: &str) -> ApiError {
    from_pending(&PendingError::Unknown(plugin.to_string()))
}

fn from_pending(e: &PendingError) -> ApiError {
    let (status, code) = match e {
        PendingError::Unknown(_) => (StatusCode::NOT_FOUND, "unknown_pending"),
        PendingError::NotApprovable { .. } => (StatusCode::CONFLICT, "not_approvable"),
        PendingError::Busy(_) => (StatusCode::CONFLICT, "busy"),
    };
    ApiError {
        status,
        code: json!(code),
        message: e.to_string(),
    }
}
