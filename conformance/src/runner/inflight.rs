//! A request handler that counts the plugin-to-host requests still being
//! answered, so that the whole-run observations (`storage.no_denials`)
//! wait for the last ones: a plugin may fire a storage request just before
//! it answers the call that caused it, and the broker audits a denial only
//! once it has looked at the SQL.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use kaged_host_sim::handler::{PluginRequestHandler, RequestContext};
use kaged_plugin_sdk::protocol::{Request, RpcError};
use serde_json::Value;
use tokio::sync::Notify;

/// Wraps a handler and counts the requests in flight.
pub(crate) struct Tracked {
    inner: Arc<dyn PluginRequestHandler>,
    state: Arc<State>,
}

#[derive(Default)]
struct State {
    in_flight: AtomicUsize,
    idle: Notify,
}

/// Decrements the count when the request's future ends (or is dropped).
struct Guard(Arc<State>);

impl Drop for Guard {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl Tracked {
    /// Count the requests `inner` answers.
    pub(crate) fn new(inner: Arc<dyn PluginRequestHandler>) -> Tracked {
        Tracked {
            inner,
            state: Arc::default(),
        }
    }

    /// A handle to wait on from elsewhere.
    pub(crate) fn waiter(&self) -> Waiter {
        Waiter(self.state.clone())
    }
}

impl PluginRequestHandler for Tracked {
    fn handle(
        &self,
        ctx: RequestContext,
        request: Request,
    ) -> BoxFuture<'static, Result<Value, RpcError>> {
        // Counted when the host reads the request, before any later line.
        self.state.in_flight.fetch_add(1, Ordering::SeqCst);
        let guard = Guard(self.state.clone());
        let fut = self.inner.handle(ctx, request);
        Box::pin(async move {
            let _guard = guard;
            fut.await
        })
    }
}

/// Waits until no request is in flight.
#[derive(Clone)]
pub(crate) struct Waiter(Arc<State>);

impl Waiter {
    /// Wait (at most `limit`) until every request read so far is answered;
    /// `false` when some are still in flight at the limit.
    pub(crate) async fn settle(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let idle = self.0.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            if self.0.in_flight.load(Ordering::SeqCst) == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, idle).await.is_err() {
                return self.0.in_flight.load(Ordering::SeqCst) == 0;
            }
        }
    }
}
