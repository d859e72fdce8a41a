//! The JSON-RPC connection to one plugin, over any `AsyncRead`/`AsyncWrite`
//! pair: a child's pipes or an in-process `tokio::io::duplex`.
//!
//! A reader task classifies every stdout line and never waits on a handler
//! or on the writer; a writer task owns the plugin's stdin; a stderr task
//! captures logs. Outgoing ids count from 1; answers are matched through a
//! pending map. Protocol rules enforced here (`plugin-host.md` Wire
//! protocol, Handshake failure modes, ADDENDUM §8):
//!
//! | input | action |
//! |---|---|
//! | non-JSON line | `plugin.stdout_noise` (line cut to 200 chars), discarded |
//! | line over 4 MiB | `protocol.oversize_message`, kill |
//! | batch after the handshake | answered `-32600` id null, `plugin.protocol_violation` (`batch`), unless it answers a batch sent on the raw channel |
//! | any message before `initialize` was sent, or a request/notification (or batch, or invalid message) before the handshake completed | `plugin.protocol_violation`, kill |
//! | late answer to a request given up on (timed out, cancelled) | dropped |
//! | answer with an id the host never sent, or a second answer | `plugin.protocol_violation` (`unknown_response_id`), **not** killed |
//! | answer with id null or none, after the handshake | tapped when a raw line could have prompted it (a malformed line, a batch, an open raw request); otherwise `plugin.protocol_violation` (`answer_to_notification`) |
//! | request whose id is not an integer greater than the last (first: 1) | `plugin.protocol_violation` (`request_id_not_increasing`), still handled |
//! | storage request while `initialize` said `storage_available: false` | answered `-32003` "storage is not available" and audited `plugin.storage_denied` (`reason: "storage_unavailable"`); never reaches the handler |
//! | invalid JSON-RPC after the handshake | `plugin.protocol_violation`; the matching call fails with `-32603`, otherwise answered `-32600` |
//! | notification | rate limited, `plugin.notification`, delivered to subscribers |
//! | stderr line | control characters escaped, cut, kept for `last_stderr`; rate limited into the log and the transcript (`stderr.rs`) |
//! | request | handled by the [`PluginRequestHandler`](crate::PluginRequestHandler) in its own task |

mod pending;
mod ratelimit;
mod raw_probes;
mod reader;
mod request_ids;
mod shared;
mod state;
mod stderr;
mod stderr_gate;
mod stdout_progress;
mod writer;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kaged_plugin_protocol::codec::encode_line;
use kaged_plugin_protocol::{Id, Notification, Request};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{broadcast, mpsc, watch};

use crate::bounds::FANOUT_QUEUE;
pub(crate) use pending::Pending;
use ratelimit::RateLimiter;
use raw_probes::RawProbes;
use request_ids::RequestIds;
use shared::lock;
pub use shared::ConnectionConfig;
pub(crate) use shared::Shared;
pub(crate) use state::Ending;
pub use state::{Fatal, Phase, RequestError};
pub(crate) use stdout_progress::StdoutProgress;

struct ForgetOnDrop<'a>(&'a Pending, u64);

impl Drop for ForgetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.remove(self.1);
    }
}

/// A clonable handle to one plugin connection.
#[derive(Clone)]
pub struct Connection {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("plugin", &self.shared.plugin)
            .field("phase", &self.phase())
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Start the reader, writer and (when given) stderr tasks. Must be called
    /// inside a Tokio runtime. `stdout_pipe` is a duplicate of a child's
    /// stdout read end (`None` in-process), for [`Connection::output_settled`].
    pub fn start<R, W>(
        cfg: ConnectionConfig,
        reader: R,
        writer: W,
        stderr: Option<Box<dyn AsyncRead + Send + Unpin>>,
        stdout_pipe: Option<std::os::fd::OwnedFd>,
    ) -> Connection
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (out, out_rx) = mpsc::unbounded_channel();
        let limiter = RateLimiter::new(
            cfg.timeouts.notification_window,
            cfg.timeouts.notification_limit,
        );
        let shared = Arc::new(Shared {
            plugin: cfg.manifest.name.clone(),
            cfg,
            out,
            pending: Pending::default(),
            next_id: Mutex::new(1),
            phase: AtomicU8::new(0),
            ending: Mutex::new(Ending::Running),
            kill_started: AtomicBool::new(false),
            fatal: watch::channel(None).0,
            closed: watch::channel(false).0,
            stderr_done: watch::channel(stderr.is_none()).0,
            notifications: broadcast::channel(FANOUT_QUEUE).0,
            inbound: broadcast::channel(FANOUT_QUEUE).0,
            stderr: Mutex::new(VecDeque::new()),
            raw: RawProbes::default(),
            request_ids: Mutex::new(RequestIds::default()),
            limiter: Mutex::new(limiter),
            tasks: Mutex::new(Vec::new()),
            requests_in_flight: AtomicUsize::new(0),
            request_flood: AtomicBool::new(false),
            backlog: AtomicUsize::new(0),
            stdout: Arc::new(StdoutProgress::new(stdout_pipe)),
        });
        let mut tasks = vec![
            tokio::spawn(writer::write_loop(shared.clone(), writer, out_rx)).abort_handle(),
            tokio::spawn(reader::read_loop(shared.clone(), reader)).abort_handle(),
        ];
        if let Some(err) = stderr {
            tasks.push(tokio::spawn(stderr::stderr_loop(shared.clone(), err)).abort_handle());
        }
        lock(&shared.tasks).extend(tasks);
        Connection { shared }
    }

    /// The plugin's name.
    pub fn plugin(&self) -> &str {
        &self.shared.plugin
    }

    /// The handshake phase.
    pub fn phase(&self) -> Phase {
        self.shared.phase()
    }

    /// Move to `phase` (the handshake and the raw channel do this).
    pub fn set_phase(&self, phase: Phase) {
        self.shared.phase.store(phase as u8, Ordering::SeqCst);
    }

    /// Whether a request with this id went to the plugin: a host request
    /// (integer ids from 1, in order) or one sent on the raw channel.
    pub fn was_sent(&self, id: &Value) -> bool {
        let host = id
            .as_u64()
            .is_some_and(|n| n >= 1 && n < *lock(&self.shared.next_id));
        host || self.shared.raw.was_sent(&Id::from_value(id))
    }

    /// Send `method` and wait up to `timeout` for its answer.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
    ) -> Result<Value, RequestError> {
        // The id is taken and the line queued under one lock: ids reach
        // the wire in the order they were taken (ADDENDUM §16).
        let (id, rx, sent) = {
            let mut next = lock(&self.shared.next_id);
            let id = *next;
            let line = encode_line(&Request::new(id, method, params))?;
            let rx = self.shared.pending.insert(id);
            *next += 1;
            (id, rx, self.send_encoded(line))
        };
        // Forget the id however this ends (answer, timeout, cancellation).
        let _forget = ForgetOnDrop(&self.shared.pending, id);
        if !sent {
            return Err(RequestError::Closed);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(resp)) => resp.into_result().map_err(RequestError::Rpc),
            Ok(Err(_)) => Err(RequestError::Closed),
            Err(_) => Err(RequestError::Timeout(timeout)),
        }
    }

    /// Send a notification.
    pub fn notify(&self, method: &str, params: Option<Value>) -> Result<(), RequestError> {
        let line = encode_line(&Notification::new(method, params))?;
        if self.send_encoded(line) {
            Ok(())
        } else {
            Err(RequestError::Closed)
        }
    }

    /// Send one line verbatim (a `\n` is appended when missing). When it is
    /// a request, its answer goes to [`Connection::inbound`] only; sending
    /// `initialize` / `initialized` moves the phase as the handshake would.
    pub fn send_raw(&self, line: &[u8]) -> bool {
        self.shared.raw.sent(line);
        if let Ok(v) = serde_json::from_slice::<Value>(line) {
            if let Some(m) = v.get("method").and_then(Value::as_str) {
                self.advance_phase_for(m);
            }
        }
        let mut buf = line.to_vec();
        if buf.last() != Some(&b'\n') {
            buf.push(b'\n');
        }
        self.send_encoded(buf)
    }

    /// Close the plugin's stdin after everything queued so far is written:
    /// the plugin sees end of input (ADDENDUM §2: "the host is gone").
    pub fn close_stdin(&self) -> bool {
        self.shared.send_encoded(Vec::new())
    }

    pub(crate) fn send_encoded(&self, line: Vec<u8>) -> bool {
        self.shared.send_encoded(line)
    }

    /// Move the phase as sending `method` by hand would: `initialize` from
    /// `Spawned` to `InitializeSent`, `initialized` to `Ready`.
    pub fn advance_phase_for(&self, method: &str) {
        match method {
            "initialize" if self.phase() == Phase::Spawned => self.set_phase(Phase::InitializeSent),
            "initialized" => self.set_phase(Phase::Ready),
            _ => {}
        }
    }

    /// Every notification accepted from the plugin from now on.
    pub fn notifications(&self) -> broadcast::Receiver<Notification> {
        self.shared.notifications.subscribe()
    }

    /// Every stdout line from now on, as JSON (or the raw text as a string).
    pub fn inbound(&self) -> broadcast::Receiver<Value> {
        self.shared.inbound.subscribe()
    }

    /// Whether everything the plugin has written to stdout so far was read
    /// and handled (its lines delivered to [`Connection::inbound`]): nothing
    /// waits in the pipe or in the reader.
    pub fn output_settled(&self) -> bool {
        self.shared.stdout.settled()
    }

    /// The last (up to 50) stderr lines.
    pub fn stderr_tail(&self) -> Vec<String> {
        lock(&self.shared.stderr).iter().cloned().collect()
    }

    /// Wait until a fatal condition is raised.
    pub async fn wait_fatal(&self) -> Fatal {
        let mut rx = self.shared.fatal.subscribe();
        loop {
            if let Some(f) = rx.borrow_and_update().clone() {
                return f;
            }
            if rx.changed().await.is_err() {
                // Sender lives in `shared`, which we hold: unreachable.
                std::future::pending::<()>().await;
            }
        }
    }

    /// The fatal condition raised, if any.
    pub fn fatal(&self) -> Option<Fatal> {
        self.shared.fatal.borrow().clone()
    }

    /// Wait until the plugin's stdout closed or the connection was closed.
    pub async fn wait_closed(&self) {
        let mut rx = self.shared.closed.subscribe();
        let _ = rx.wait_for(|c| *c).await;
    }

    /// Wait (up to `timeout`) until stderr reached its end.
    pub async fn wait_stderr_done(&self, timeout: Duration) {
        let mut rx = self.shared.stderr_done.subscribe();
        let _ = tokio::time::timeout(timeout, rx.wait_for(|d| *d)).await;
    }

    /// Close: stop every task, drop stdin (the plugin sees EOF), fail every
    /// pending call.
    pub fn close(&self) {
        for t in lock(&self.shared.tasks).drain(..) {
            t.abort();
        }
        self.shared.mark_closed();
    }

    pub(crate) fn ending(&self) -> Ending {
        *lock(&self.shared.ending)
    }

    /// Move from one of `from` to `to`; returns the state found.
    pub(crate) fn transition(&self, from: &[Ending], to: Ending) -> Result<Ending, Ending> {
        let mut g = lock(&self.shared.ending);
        let found = *g;
        if from.contains(&found) {
            *g = to;
            Ok(found)
        } else {
            Err(found)
        }
    }

    /// True for exactly one caller: the one that performs the kill.
    pub(crate) fn claim_kill(&self) -> bool {
        !self.shared.kill_started.swap(true, Ordering::SeqCst)
    }
}
