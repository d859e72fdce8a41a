//! API errors: a status and `{"error": {"code", "message"}}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::super::error::DaemonError;
use crate::plugin::session::call::CallError;
use kaged_plugin_protocol::error_chain::chain;

/// An API error answer.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A short machine-readable code (`unknown_plugin`), or the plugin's
    /// JSON-RPC error code.
    pub code: serde_json::Value,
    /// What was wrong.
    pub message: String,
}

impl ApiError {
    /// A `400 bad_request` with `message`.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            code: json!("bad_request"),
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.code, "message": self.message}});
        (self.status, Json(body)).into_response()
    }
}

impl From<DaemonError> for ApiError {
    fn from(e: DaemonError) -> ApiError {
        let (status, code) = match &e {
            DaemonError::UnknownPlugin(_) => (StatusCode::NOT_FOUND, json!("unknown_plugin")),
            DaemonError::UnknownKnob { .. } => (StatusCode::NOT_FOUND, json!("unknown_knob")),
            DaemonError::NotRunning { .. }
            | DaemonError::Supervisor(_)
            | DaemonError::NoManifest { .. } => (StatusCode::CONFLICT, json!("not_running")),
            DaemonError::NoProject(_) => (StatusCode::BAD_REQUEST, json!("no_project")),
            DaemonError::OutOfBounds { .. } => {
                (StatusCode::UNPROCESSABLE_ENTITY, json!("out_of_bounds"))
            }
            DaemonError::InvalidConfig { .. } => {
                (StatusCode::UNPROCESSABLE_ENTITY, json!("invalid_config"))
            }
            DaemonError::Rejected { .. } => (StatusCode::BAD_GATEWAY, json!("rejected")),
            DaemonError::Call(c) => return from_call(c),
            DaemonError::Store { .. } | DaemonError::PluginsDir { .. } => {
                (StatusCode::INTERNAL_SERVER_ERROR, json!("internal"))
            }
        };
        ApiError {
            status,
            code,
            message: chain(&e),
        }
    }
}

/// A failed call: the plugin's own error keeps its code and message (502);
/// a method that is not declared or needs an agent is the caller's (4xx).
fn from_call(e: &CallError) -> ApiError {
    let (status, code) = match e {
        CallError::Plugin { error, .. } => {
            return ApiError {
                status: StatusCode::BAD_GATEWAY,
                code: json!(error.code),
                message: error.message.clone(),
            }
        }
        CallError::NotDeclared { .. } | CallError::Unavailable { .. } => {
            (StatusCode::NOT_FOUND, json!("unknown_method"))
        }
        CallError::Timeout { .. } => (StatusCode::GATEWAY_TIMEOUT, json!("timeout")),
        CallError::Closed { .. } => (StatusCode::SERVICE_UNAVAILABLE, json!("not_running")),
        _ => (StatusCode::BAD_REQUEST, json!("bad_call")),
    };
    ApiError {
        status,
        code,
        message: chain(e),
    }
}
