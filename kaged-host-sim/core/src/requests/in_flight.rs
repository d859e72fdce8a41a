//! Waiting for the plugin-to-host requests still being answered.
//!
//! Each request a plugin sends the host is answered in its own task, so a
//! plugin may answer a call before the host has finished answering (and
//! auditing) a storage request the call made: a denial can reach the audit
//! log after the call's answer. [`InFlight`] wraps a handler and counts
//! the requests it is still answering; [`InFlightWaiter::settle`] waits
//! until none is left, e.g. before reading the audit log.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use std::time::Duration;
//! use kaged_host_core::{DefaultHandler, HostConfig, HostSim, InFlight};
//! let tracked = InFlight::new(Arc::new(DefaultHandler));
//! let waiter = tracked.waiter();
//! let host = HostSim::new(HostConfig::default().with_handler(Arc::new(tracked)));
//! // ... launch plugins on `host` and call them ...
//! assert!(waiter.settle(Duration::from_secs(1)).await);
//! # let _ = host;
//! # });
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use kaged_plugin_protocol::{Request, RpcError};
use serde_json::Value;
use tokio::sync::Notify;

use crate::requests::handler::{PluginRequestHandler, RequestContext};

/// A handler that counts the requests it is still answering.
pub struct InFlight {
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

impl InFlight {
    /// Count the requests `inner` answers.
    pub fn new(inner: Arc<dyn PluginRequestHandler>) -> InFlight {
        InFlight {
            inner,
            state: Arc::default(),
        }
    }

    /// A handle to wait on from elsewhere (the handler itself usually moves
    /// into the host).
    pub fn waiter(&self) -> InFlightWaiter {
        InFlightWaiter(self.state.clone())
    }
}

impl PluginRequestHandler for InFlight {
    fn handle(
        &self,
        ctx: RequestContext,
        request: Request,
    ) -> BoxFuture<'static, Result<Value, RpcError>> {
        // Counted when the host reads the request, before it reads any
        // later line from the plugin (the reader calls `handle` inline).
        self.state.in_flight.fetch_add(1, Ordering::SeqCst);
        let guard = Guard(self.state.clone());
        let fut = self.inner.handle(ctx, request);
        Box::pin(async move {
            let _guard = guard;
            fut.await
        })
    }

    fn redact_sql(&self, sql: &str) -> String {
        self.inner.redact_sql(sql)
    }
}

/// Waits until an [`InFlight`] handler has no request left.
#[derive(Clone)]
pub struct InFlightWaiter(Arc<State>);

impl InFlightWaiter {
    /// The requests being answered now.
    pub fn count(&self) -> usize {
        self.0.in_flight.load(Ordering::SeqCst)
    }

    /// Wait, at most `limit`, until every request read so far is answered;
    /// `false` when some are still in flight at the limit.
    pub async fn settle(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let idle = self.0.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            if self.count() == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, idle).await.is_err() {
                return self.count() == 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kaged_plugin_protocol::manifest::Manifest;
    use tokio::sync::oneshot;

    /// Answers once its gate opens.
    struct Gated(std::sync::Mutex<Option<oneshot::Receiver<()>>>);

    impl PluginRequestHandler for Gated {
        fn handle(
            &self,
            _: RequestContext,
            _: Request,
        ) -> BoxFuture<'static, Result<Value, RpcError>> {
            let gate = self.0.lock().ok().and_then(|mut g| g.take());
            Box::pin(async move {
                if let Some(g) = gate {
                    let _ = g.await;
                }
                Ok(Value::Null)
            })
        }
    }

    fn ctx() -> RequestContext {
        let m = Manifest::from_yaml_str(
            "name: p\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [x]\ncapabilities: []\n",
        )
        .expect("manifest");
        RequestContext {
            plugin: "p".into(),
            manifest: Arc::new(m),
            audit: crate::observe::audit::AuditLog::discard(),
        }
    }

    #[tokio::test]
    async fn settle_waits_for_the_last_answer() {
        let (open, gate) = oneshot::channel();
        let tracked = InFlight::new(Arc::new(Gated(std::sync::Mutex::new(Some(gate)))));
        let waiter = tracked.waiter();
        assert!(
            waiter.settle(Duration::from_secs(1)).await,
            "nothing in flight yet"
        );

        let answer = tokio::spawn(tracked.handle(ctx(), Request::new(1u64, "x.y", None)));
        assert_eq!(waiter.count(), 1, "counted as soon as it is read");
        // A zero limit looks once and does not wait.
        assert!(!waiter.settle(Duration::ZERO).await, "still in flight");

        let settled = tokio::spawn({
            let w = waiter.clone();
            // A guard against a hang, not a timing assertion.
            async move { w.settle(Duration::from_secs(60)).await }
        });
        open.send(()).expect("gate");
        assert!(settled.await.expect("join"), "settles once answered");
        assert!(answer.await.expect("join").is_ok());
        assert_eq!(waiter.count(), 0);
    }

    #[tokio::test]
    async fn a_dropped_request_is_not_counted_forever() {
        let (_open, gate) = oneshot::channel::<()>();
        let tracked = InFlight::new(Arc::new(Gated(std::sync::Mutex::new(Some(gate)))));
        let waiter = tracked.waiter();
        let fut = tracked.handle(ctx(), Request::new(1u64, "x.y", None));
        assert_eq!(waiter.count(), 1);
        drop(fut);
        assert_eq!(waiter.count(), 0);
        assert!(waiter.settle(Duration::ZERO).await);
    }
}
