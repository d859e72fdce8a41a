//! API errors: a status and `{"error": {"code", "message"}}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::super::error::DaemonError;
use kaged_host_core::CallError;
use kaged_host_core::SupervisorError;
use kaged_host_engine::KnobWriteError;
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
            // plugin-host.md § Failure modes: "Calls to plugin return 502
            // until restart."
            DaemonError::NotRunning { .. } => (StatusCode::BAD_GATEWAY, json!("not_running")),
            DaemonError::NoManifest { .. } => (StatusCode::CONFLICT, json!("no_manifest")),
            DaemonError::NestedGrant { .. } => (StatusCode::CONFLICT, json!("nested_grant")),
            DaemonError::Supervisor(SupervisorError::AlreadyActive { .. }) => {
                (StatusCode::CONFLICT, json!("already_active"))
            }
            DaemonError::Supervisor(SupervisorError::NotEnabled { .. }) => {
                (StatusCode::CONFLICT, json!("not_enabled"))
            }
            DaemonError::NoProject(_) => (StatusCode::BAD_REQUEST, json!("no_project")),
            DaemonError::UnknownAgent { .. } => (StatusCode::NOT_FOUND, json!("unknown_agent")),
            DaemonError::NotActive { .. } => (StatusCode::NOT_FOUND, json!("not_active")),
            DaemonError::ConfigRefused { .. } => (StatusCode::BAD_GATEWAY, json!("rejected")),
            DaemonError::Knob(k) => knob_status(k),
            DaemonError::Call(c) => return from_call(c),
            DaemonError::ProjectNotSaved(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                json!("project_not_saved"),
            ),
            DaemonError::Store { .. }
            | DaemonError::PluginsDir { .. }
            | DaemonError::Project { .. } => (StatusCode::INTERNAL_SERVER_ERROR, json!("internal")),
        };
        ApiError {
            status,
            code,
            message: chain(&e),
        }
    }
}

/// A refused knob write: the caller's (404, 422) unless the plugin refused
/// the new config (502).
fn knob_status(e: &KnobWriteError) -> (StatusCode, serde_json::Value) {
    match e {
        KnobWriteError::UnknownKnob { .. } => (StatusCode::NOT_FOUND, json!("unknown_knob")),
        KnobWriteError::UnknownAgent(_) => (StatusCode::NOT_FOUND, json!("unknown_agent")),
        KnobWriteError::NotDeclared { .. } => (StatusCode::NOT_FOUND, json!("not_active")),
        KnobWriteError::OutOfBounds { .. } => {
            (StatusCode::UNPROCESSABLE_ENTITY, json!("out_of_bounds"))
        }
        KnobWriteError::InvalidConfig { .. } => {
            (StatusCode::UNPROCESSABLE_ENTITY, json!("invalid_config"))
        }
        KnobWriteError::Rejected { .. } => (StatusCode::BAD_GATEWAY, json!("rejected")),
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
        // plugin-host.md § Failure modes: "The timed-out request returns
        // -32603 to caller", and it is answered like a crash (502,
        // ADDENDUM §15); the message says it timed out.
        CallError::Timeout { .. } => (StatusCode::BAD_GATEWAY, json!(-32603)),
        // The process ended under the call: 502 until it is restarted.
        CallError::Closed { .. } => (StatusCode::BAD_GATEWAY, json!("not_running")),
        _ => (StatusCode::BAD_REQUEST, json!("bad_call")),
    };
    ApiError {
        status,
        code,
        message: chain(e),
    }
}
