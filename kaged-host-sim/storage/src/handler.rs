//! A [`PluginRequestHandler`] backed by the [`StorageBroker`]: answers a
//! plugin's `kaged.storage.*` requests with the broker and audits every
//! access denial as `plugin.storage_denied` (ADDENDUM §7). The conformance
//! suite plugs it into its host so that storage-using plugins work and
//! their denials are seen.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use kaged_host_core::{AuditLog, PluginRequestHandler, RequestContext};
//! use kaged_host_storage::BrokerHandler;
//! use kaged_plugin_protocol::Request;
//! let m = kaged_plugin_protocol::manifest::Manifest::from_yaml_str(
//!     "name: p\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [x]\ncapabilities: [kaged:storage:read]\n").unwrap();
//! let audit = AuditLog::memory();
//! let ctx = RequestContext { plugin: "p".into(), manifest: Arc::new(m), audit: audit.clone() };
//! let handler = BrokerHandler::temp().unwrap();
//! let sql = serde_json::json!({"sql": "SELECT * FROM sqlite_master", "params": []});
//! let e = handler.handle(ctx, Request::new(1u64, "kaged.storage.query", Some(sql))).await.unwrap_err();
//! assert_eq!(e.code, -32003);
//! assert_eq!(audit.names(), ["plugin.storage_denied"]);
//! # });
//! ```

use std::sync::Arc;

use futures_util::future::BoxFuture;
use kaged_plugin_protocol::{ErrorCode, Request, RpcError, StorageMethod};
use serde_json::{json, Value};

use kaged_host_core::audit::AuditEvent;
use kaged_host_core::{PluginRequestHandler, RequestContext};

use crate::{BrokerError, StorageBroker, StorageClient};

/// Answers storage requests with a broker; anything else `-32601`.
#[derive(Clone)]
pub struct BrokerHandler {
    broker: Arc<StorageBroker>,
}

impl std::fmt::Debug for BrokerHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrokerHandler").finish_non_exhaustive()
    }
}

impl BrokerHandler {
    /// A handler over `broker`.
    pub fn new(broker: StorageBroker) -> BrokerHandler {
        BrokerHandler {
            broker: Arc::new(broker),
        }
    }

    /// A handler over a fresh temporary database.
    pub fn temp() -> Result<BrokerHandler, BrokerError> {
        StorageBroker::open_temp().map(BrokerHandler::new)
    }
}

impl PluginRequestHandler for BrokerHandler {
    fn handle(
        &self,
        ctx: RequestContext,
        request: Request,
    ) -> BoxFuture<'static, Result<Value, RpcError>> {
        let Some(method) = StorageMethod::parse(&request.method) else {
            let e = RpcError::new(
                ErrorCode::MethodNotFound,
                format!("Method not found: {}", request.method),
            );
            return Box::pin(async move { Err(e) });
        };
        let broker = self.broker.clone();
        Box::pin(async move {
            let caps = ctx.manifest.capability_strings();
            let client = StorageClient::from_capabilities(
                &ctx.plugin,
                caps.iter().map(String::as_str),
                true,
            );
            let params = request.params;
            let answer =
                tokio::task::spawn_blocking(move || broker.handle(&client, method, params)).await;
            match answer {
                Ok(Ok(v)) => Ok(v),
                Ok(Err(denial)) => {
                    if denial.is_access_denial() {
                        let mut data = json!({"sql": denial.redacted_sql, "reason": denial.reason,
                                   "method": method.as_str()});
                        if let Some(cap) = denial.missing_capability {
                            data["capability"] = json!(cap);
                        }
                        ctx.audit.emit(AuditEvent::StorageDenied, &ctx.plugin, data);
                    }
                    Err(denial.into_rpc_error())
                }
                Err(e) => Err(RpcError::new(
                    ErrorCode::InternalError,
                    format!("storage call failed: {e}"),
                )),
            }
        })
    }

    /// Literals become `?`, comments go ([`crate::redact_sql`]).
    fn redact_sql(&self, sql: &str) -> String {
        crate::redact_sql(sql)
    }
}
