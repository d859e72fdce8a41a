//! The request an audit record is caused by: an operator's API request
//! runs its work inside [`with_request_id`], and every audit record
//! emitted by that work (in that task: the enable, disable or restart it
//! asked for, its knob write, the kill after a call of it timed out)
//! carries `request_id` unless it names one of its own (ADDENDUM §16).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use kaged_host_core::audit::{with_request_id, AuditEvent, AuditLog};
//! let log = AuditLog::memory();
//! with_request_id("req_api_7".into(), async {
//!     log.emit(AuditEvent::Disabled, "echo", serde_json::json!({"reason": "operator"}));
//! })
//! .await;
//! log.emit(AuditEvent::Enabled, "echo", serde_json::json!({}));
//! let events = log.events();
//! assert_eq!(events[0].data["request_id"], "req_api_7");
//! assert!(events[1].data.get("request_id").is_none());
//! # });
//! ```

use std::future::Future;

tokio::task_local! {
    static REQUEST_ID: String;
}

/// Run `work` with `id` as the request its audit records are caused by.
pub async fn with_request_id<F: Future>(id: String, work: F) -> F::Output {
    REQUEST_ID.scope(id, work).await
}

/// The request the current task works for, if any.
pub fn current_request_id() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

/// Run the blocking `work` (inside `spawn_blocking`, where the task's
/// request is not visible) with `id`, when there is one, as the request
/// its audit records are caused by: take [`current_request_id`] before
/// handing the work to the blocking thread, and give it here.
pub fn with_request_id_blocking<T>(id: Option<String>, work: impl FnOnce() -> T) -> T {
    match id {
        Some(id) => REQUEST_ID.sync_scope(id, work),
        None => work(),
    }
}
