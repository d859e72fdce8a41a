//! [`GatedHandler`]: a plugin-request handler for tests that must catch a
//! plugin waiting on the host. It reports each request's method as it
//! arrives and holds every answer until the test opens the gate, so a
//! test can wait for "the plugin's request reached the host" (an event,
//! never a sleep) and prove what the plugin does while its handler waits.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use kaged_plugin_protocol::{Request, RpcError};
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use crate::{PluginRequestHandler, RequestContext};

/// Wraps a handler: says when each request arrives, answers only once
/// [`Gate::open`] was called.
pub struct GatedHandler {
    inner: Arc<dyn PluginRequestHandler>,
    gate: watch::Receiver<bool>,
    arrived: mpsc::UnboundedSender<String>,
}

/// The test's side of a [`GatedHandler`]: the arrivals and the gate.
pub struct Gate {
    open: watch::Sender<bool>,
    arrivals: mpsc::UnboundedReceiver<String>,
}

impl GatedHandler {
    /// `inner` behind a closed gate, and the test's side of it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use kaged_host_core::{testing::gated::GatedHandler, DefaultHandler};
    /// let (handler, _gate) = GatedHandler::new(Arc::new(DefaultHandler));
    /// let _config = kaged_host_core::HostConfig::default().with_handler(Arc::new(handler));
    /// ```
    pub fn new(inner: Arc<dyn PluginRequestHandler>) -> (GatedHandler, Gate) {
        let (open, gate) = watch::channel(false);
        let (arrived, arrivals) = mpsc::unbounded_channel();
        (
            GatedHandler {
                inner,
                gate,
                arrived,
            },
            Gate { open, arrivals },
        )
    }
}

impl Gate {
    /// The method of the next request that reached the host (`None` once
    /// the handler is gone).
    pub async fn arrived(&mut self) -> Option<String> {
        self.arrivals.recv().await
    }

    /// Let every held and later answer through.
    pub fn open(&self) {
        self.open.send_replace(true);
    }
}

impl PluginRequestHandler for GatedHandler {
    fn handle(
        &self,
        ctx: RequestContext,
        request: Request,
    ) -> BoxFuture<'static, Result<Value, RpcError>> {
        let mut gate = self.gate.clone();
        let _ = self.arrived.send(request.method.clone());
        let answer = self.inner.handle(ctx, request);
        Box::pin(async move {
            let _ = gate.wait_for(|open| *open).await;
            answer.await
        })
    }

    fn redact_sql(&self, sql: &str) -> String {
        self.inner.redact_sql(sql)
    }
}
