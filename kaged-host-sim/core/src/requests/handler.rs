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
use serde_json::Value;

use crate::observe::audit::AuditLog;

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
}

/// The handler used until a storage broker is plugged in: storage methods
/// answer `-32003` "storage not available", anything else `-32601`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultHandler;

impl PluginRequestHandler for DefaultHandler {
    fn handle(
        &self,
        _ctx: RequestContext,
        request: Request,
    ) -> BoxFuture<'static, Result<Value, RpcError>> {
        let answer = match StorageMethod::parse(&request.method) {
            Some(_) => RpcError::new(ErrorCode::StorageAccessDenied, "storage not available"),
            None => RpcError::new(
                ErrorCode::MethodNotFound,
                format!("Method not found: {}", request.method),
            ),
        };
        Box::pin(async move { Err(answer) })
    }
}
