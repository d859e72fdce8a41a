//! [`Host`]: the plugin's handle to the daemon, for notifications and
//! plugin-to-host requests (storage). Ids of our requests count from 1.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};

use crate::codec::encode_line;
use crate::error::SdkError;
use crate::protocol::{names, InitializeParams, Notification, Request, RpcError};

/// A unit of work for the writer task.
pub(crate) enum Outgoing {
    /// One encoded line, newline included.
    Line(Vec<u8>),
    /// Answer once everything queued before it is written and flushed.
    Flush(oneshot::Sender<()>),
}

type Pending = HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>;

struct Inner {
    name: String,
    out: mpsc::UnboundedSender<Outgoing>,
    /// The next request id; read and advanced only under `held`'s lock.
    next_id: AtomicU64,
    pending: Mutex<Pending>,
    /// Lines held back until the handshake completes (`None` once ready).
    held: Mutex<Option<Vec<Vec<u8>>>>,
    /// What the host said in `initialize` (`None` before it).
    init: Mutex<Option<InitializeParams>>,
    /// Whether the schema migrations are done (see [`crate::Migrations`]).
    schema: watch::Sender<Schema>,
}

/// Where the plugin's schema migrations are.
#[derive(Debug, Clone)]
pub(crate) enum Schema {
    /// Nothing to wait for (no migrations, or they ran).
    Ready,
    /// Running since `initialized`.
    Migrating,
    /// A step failed: every gated call is answered this.
    Failed(RpcError),
}

/// The plugin's handle to the host. Cheap to clone; every handler receives
/// one in its [`crate::Call`].
#[derive(Clone)]
pub struct Host {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("plugin", &self.inner.name)
            .finish()
    }
}

impl Host {
    pub(crate) fn new(name: String, out: mpsc::UnboundedSender<Outgoing>) -> Host {
        Host {
            inner: Arc::new(Inner {
                name,
                out,
                next_id: AtomicU64::new(1),
                pending: Mutex::new(HashMap::new()),
                held: Mutex::new(Some(Vec::new())),
                init: Mutex::new(None),
                schema: watch::channel(Schema::Ready).0,
            }),
        }
    }

    /// The plugin's name.
    pub fn plugin_name(&self) -> &str {
        &self.inner.name
    }

    /// What the host sent in `initialize`: its `daemon_version`, the
    /// `projects` loaded at start and whether brokered storage is
    /// available (`storage_available`); `None` before the handshake.
    ///
    /// ```no_run
    /// # async fn demo(call: kaged_plugin_sdk::Call) {
    /// let storage = call.host.initialize_params().is_some_and(|p| p.storage_available);
    /// # }
    /// ```
    pub fn initialize_params(&self) -> Option<InitializeParams> {
        self.inner
            .init
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Keep the `initialize` params for [`Host::initialize_params`].
    pub(crate) fn set_initialize_params(&self, params: InitializeParams) {
        *self.inner.init.lock().unwrap_or_else(|p| p.into_inner()) = Some(params);
    }

    /// Send a notification to the host. Before the handshake completes the
    /// notification is held and sent right after `initialized` arrives.
    ///
    /// Fails when the name breaks the naming rules, the message would be
    /// over 4 MiB, or the connection is closed.
    pub fn notify<P: Serialize>(&self, method: &str, params: P) -> Result<(), SdkError> {
        if !names::is_method_name(method) {
            return Err(SdkError::InvalidName(method.into()));
        }
        let params = serde_json::to_value(params).map_err(crate::codec::EncodeError::from)?;
        let line = encode_line(&Notification::new(method, Some(params)))?;
        self.send_after_handshake(line)
    }

    /// Send a request to the host and wait for its answer.
    ///
    /// Ids count from 1 and reach the wire in increasing order even when
    /// tasks on several worker threads ask at once: the id is taken under
    /// the same lock that queues the line.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, HostCallError> {
        let (tx, rx) = oneshot::channel();
        {
            let mut held = lock(&self.inner.held);
            let id = self.inner.next_id.load(Ordering::Relaxed);
            let line = encode_line(&Request::new(id, method, Some(params)))
                .map_err(|e| HostCallError::Sdk(e.into()))?;
            lock(&self.inner.pending).insert(id, tx);
            if let Err(e) = self.queue(&mut held, line) {
                lock(&self.inner.pending).remove(&id);
                return Err(HostCallError::Sdk(e));
            }
            // An id is used only once its line is queued.
            self.inner.next_id.store(id + 1, Ordering::Relaxed);
        }
        match rx.await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(HostCallError::Rpc(e)),
            Err(_) => Err(HostCallError::Sdk(SdkError::Disconnected)),
        }
    }

    fn send_after_handshake(&self, line: Vec<u8>) -> Result<(), SdkError> {
        self.queue(&mut lock(&self.inner.held), line)
    }

    /// Hold `line` until the handshake completes, or send it now; `held` is
    /// the locked hold queue, so lines leave in the order they are queued.
    fn queue(&self, held: &mut Option<Vec<Vec<u8>>>, line: Vec<u8>) -> Result<(), SdkError> {
        match held.as_mut() {
            Some(queue) => {
                queue.push(line);
                Ok(())
            }
            None => self.send_line(line),
        }
    }

    pub(crate) fn send_line(&self, line: Vec<u8>) -> Result<(), SdkError> {
        self.inner
            .out
            .send(Outgoing::Line(line))
            .map_err(|_| SdkError::Disconnected)
    }

    /// The handshake completed: release held lines.
    pub(crate) fn mark_ready(&self) {
        let mut held = lock(&self.inner.held);
        if let Some(queue) = held.take() {
            for line in queue {
                let _ = self.send_line(line);
            }
        }
    }

    /// Route a response from the host to the waiting request. Returns false
    /// when no request with that id is waiting.
    pub(crate) fn resolve(&self, id: Option<u64>, outcome: Result<Value, RpcError>) -> bool {
        let Some(id) = id else { return false };
        match lock(&self.inner.pending).remove(&id) {
            Some(tx) => {
                let _ = tx.send(outcome);
                true
            }
            None => false,
        }
    }

    /// Wait until every line queued so far is written and flushed.
    pub(crate) async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.inner.out.send(Outgoing::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }

    /// Record where the schema migrations are.
    pub(crate) fn set_schema(&self, state: Schema) {
        self.inner.schema.send_replace(state);
    }

    /// Wait until the schema migrations are done: `Err` with the failure
    /// when one failed. Answers at once when there is nothing to wait for.
    pub(crate) async fn schema_ready(&self) -> Result<(), RpcError> {
        let mut rx = self.inner.schema.subscribe();
        let state = rx
            .wait_for(|s| !matches!(s, Schema::Migrating))
            .await
            .map(|s| s.clone())
            .unwrap_or(Schema::Ready);
        match state {
            Schema::Failed(e) => Err(e),
            _ => Ok(()),
        }
    }

    /// Drop every waiting request (they fail with `Disconnected`).
    pub(crate) fn fail_pending(&self) {
        lock(&self.inner.pending).clear();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A request to the host that did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum HostCallError {
    /// The host answered with an error.
    #[error("the host answered with an error: {0}")]
    Rpc(RpcError),
    /// The request could not be sent or answered.
    #[error(transparent)]
    Sdk(SdkError),
}
