//! The storage broker's share of a call: a plugin that reads or writes
//! storage while serving a call waits for the host's SQLite, and that time
//! is the host's, not the plugin's. [`TimedHandler`] wraps the host's
//! request handler and counts the requests it answered and the time it
//! took; a bench phase reads the counts before and after.
//!
//! ```
//! use std::sync::Arc;
//! use kaged_host_sim::bench::broker::TimedHandler;
//! let timed = TimedHandler::new(Arc::new(kaged_host_core::DefaultHandler));
//! assert_eq!(timed.stats().snapshot().requests, 0);
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use kaged_host_core::{PluginRequestHandler, RequestContext};
use kaged_plugin_protocol::{Request, RpcError};
use serde_json::Value;

/// Requests answered and the time spent answering them, so far.
#[derive(Debug, Default)]
pub struct BrokerStats {
    requests: AtomicU64,
    nanos: AtomicU64,
}

/// A reading of [`BrokerStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BrokerSnapshot {
    /// Requests answered.
    pub requests: u64,
    /// Time spent answering them.
    pub busy: Duration,
}

impl BrokerStats {
    /// The counts now.
    pub fn snapshot(&self) -> BrokerSnapshot {
        BrokerSnapshot {
            requests: self.requests.load(Ordering::Relaxed),
            busy: Duration::from_nanos(self.nanos.load(Ordering::Relaxed)),
        }
    }

    fn add(&self, took: Duration) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.nanos.fetch_add(nanos, Ordering::Relaxed);
    }
}

impl BrokerSnapshot {
    /// What happened between `earlier` and this reading.
    pub fn since(self, earlier: BrokerSnapshot) -> BrokerSnapshot {
        BrokerSnapshot {
            requests: self.requests.saturating_sub(earlier.requests),
            busy: self.busy.saturating_sub(earlier.busy),
        }
    }
}

/// The host's request handler, timed.
pub struct TimedHandler {
    inner: Arc<dyn PluginRequestHandler>,
    stats: Arc<BrokerStats>,
}

impl TimedHandler {
    /// Time `inner`.
    pub fn new(inner: Arc<dyn PluginRequestHandler>) -> TimedHandler {
        TimedHandler {
            inner,
            stats: Arc::default(),
        }
    }

    /// Its counts (shared: read them while it runs).
    pub fn stats(&self) -> Arc<BrokerStats> {
        self.stats.clone()
    }
}

impl PluginRequestHandler for TimedHandler {
    fn handle(
        &self,
        ctx: RequestContext,
        request: Request,
    ) -> BoxFuture<'static, Result<Value, RpcError>> {
        let stats = self.stats.clone();
        let answer = self.inner.handle(ctx, request);
        Box::pin(async move {
            let began = Instant::now();
            let r = answer.await;
            stats.add(began.elapsed());
            r
        })
    }

    fn redact_sql(&self, sql: &str) -> String {
        self.inner.redact_sql(sql)
    }
}
