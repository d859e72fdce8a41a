//! Plugin-to-host requests (storage methods and anything else a plugin
//! asks the host): an object-safe async handler trait and its default.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use kaged_host_core::{DefaultHandler, PluginRequestHandler, RequestContext};
//! use kaged_plugin_protocol::Request;
//! let m = kaged_plugin_protocol::manifest::Manifest::from_yaml_str(
//!     "name: p\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [x]\ncapabilities: []\n").unwrap();
//! let ctx = RequestContext { plugin: "p".into(), manifest: Arc::new(m),
//!     audit: kaged_host_core::AuditLog::discard() };
//! let req = Request::new(1u64, "kaged.storage.query", None);
//! assert_eq!(DefaultHandler.handle(ctx, req).await.unwrap_err().code, -32003);
//! # });
//! ```

use std::sync::Arc;

use futures_util::future::BoxFuture;
use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::{ErrorCode, Request, RpcError, StorageMethod};
use serde_json::{json, Value};

use crate::observe::audit::{AuditEvent, AuditLog};

/// What a handler knows about the plugin that asked.
#[derive(Debug, Clone)]
pub struct RequestContext {
    /// The plugin's name.
    pub plugin: String,
    /// Its manifest (capabilities, storage prefix...).
    pub manifest: Arc<Manifest>,
    /// The audit log (e.g. for `plugin.storage_denied`).
    pub audit: AuditLog,
}

/// Answers requests a plugin sends to the host. Each request is handled in
/// its own task, so a slow handler never blocks the connection's reader.
pub trait PluginRequestHandler: Send + Sync {
    /// Answer `request` with a result or a JSON-RPC error.
    fn handle(
        &self,
        ctx: RequestContext,
        request: Request,
    ) -> BoxFuture<'static, Result<Value, RpcError>>;

    /// A storage request's SQL as the audit log may show it (the
    /// `sql` of `plugin.storage_denied`). The default keeps only its
    /// length; the storage broker redacts literals and keeps the rest.
    fn redact_sql(&self, sql: &str) -> String {
        format!("<{} bytes of SQL>", sql.len())
    }
}

/// The `reason` of `plugin.storage_denied` when the host has no storage for
/// the plugin (`initialize` said `storage_available: false`, or no broker
/// is plugged in).
pub const STORAGE_UNAVAILABLE: &str = "storage_unavailable";

/// Refuse a storage request because the host has no storage for the
/// plugin: `-32003` with `message`, and a `plugin.storage_denied` record
/// with `reason: "storage_unavailable"` (ADDENDUM §15: every denial is
/// audited), its `method` and its SQL as `handler` redacts it.
pub fn deny_unavailable_storage(
    handler: &dyn PluginRequestHandler,
    ctx: &RequestContext,
    request: &Request,
    message: &str,
) -> RpcError {
    ctx.audit
        .emit_with(AuditEvent::StorageDenied, &ctx.plugin, || {
            let sql = request
                .params
                .as_ref()
                .and_then(|p| p.get("sql"))
                .and_then(Value::as_str)
                .map(|sql| handler.redact_sql(sql));
            json!({"sql": sql, "reason": STORAGE_UNAVAILABLE, "method": request.method})
        });
    RpcError::new(ErrorCode::StorageAccessDenied, message)
}

/// The handler used until a storage broker is plugged in: storage methods
/// answer `-32003` "storage not available" (audited, see
/// [`deny_unavailable_storage`]), anything else `-32601`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultHandler;

impl PluginRequestHandler for DefaultHandler {
    fn handle(
        &self,
        ctx: RequestContext,
        request: Request,
    ) -> BoxFuture<'static, Result<Value, RpcError>> {
        let answer = match StorageMethod::parse(&request.method) {
            Some(_) => deny_unavailable_storage(self, &ctx, &request, "storage not available"),
            None => RpcError::new(
                ErrorCode::MethodNotFound,
                format!("Method not found: {}", request.method),
            ),
        };
        Box::pin(async move { Err(answer) })
    }
}
