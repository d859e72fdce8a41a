//! The state one connection's reader, writer and handle share.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::Notification;
use serde_json::Value;
use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::AbortHandle;

use super::pending::Pending;
use super::ratelimit::RateLimiter;
use super::raw_probes::RawProbes;
use super::request_ids::RequestIds;
use super::state::{Ending, Fatal, Phase};
use crate::bounds::MAX_STDIN_BACKLOG_BYTES;
use crate::observe::audit::{AuditEvent, AuditLog};
use crate::observe::transcript::{Direction, Transcript};
use crate::observe::violation::Violation;
use crate::requests::handler::{PluginRequestHandler, RequestContext};
use crate::time::Timeouts;

pub use crate::bounds::STDERR_RING;

/// What a connection needs to know.
#[derive(Clone)]
pub struct ConnectionConfig {
    /// The plugin's manifest.
    pub manifest: Arc<Manifest>,
    /// Audit sink.
    pub audit: AuditLog,
    /// Transcript sink.
    pub transcript: Transcript,
    /// Plugin-to-host request handler.
    pub handler: Arc<dyn PluginRequestHandler>,
    /// Effective timeouts.
    pub timeouts: Timeouts,
    /// What `initialize` said in `storage_available`: when `false`, the
    /// plugin's storage requests are answered `-32003` "storage is not
    /// available" without reaching the handler.
    pub storage_available: bool,
}

pub(crate) struct Shared {
    pub(crate) plugin: String,
    pub(crate) cfg: ConnectionConfig,
    pub(super) out: mpsc::UnboundedSender<Vec<u8>>,
    pub(crate) pending: Pending,
    /// The next outgoing request id (1, 2, ...). A request's id is taken
    /// and its line queued for the writer under this one lock, so the ids
    /// reach the wire (and the transcript) strictly increasing whatever
    /// tasks send at once.
    pub(super) next_id: Mutex<u64>,
    pub(super) phase: AtomicU8,
    pub(super) ending: Mutex<Ending>,
    pub(super) kill_started: AtomicBool,
    pub(super) fatal: watch::Sender<Option<Fatal>>,
    pub(super) closed: watch::Sender<bool>,
    pub(super) stderr_done: watch::Sender<bool>,
    pub(crate) notifications: broadcast::Sender<Notification>,
    pub(crate) inbound: broadcast::Sender<Value>,
    pub(super) stderr: Mutex<VecDeque<String>>,
    pub(super) raw: RawProbes,
    pub(super) request_ids: Mutex<RequestIds>,
    pub(super) limiter: Mutex<RateLimiter>,
    pub(super) tasks: Mutex<Vec<AbortHandle>>,
    /// Plugin→host requests being answered (bounds::MAX_PLUGIN_REQUESTS_IN_FLIGHT).
    pub(super) requests_in_flight: AtomicUsize,
    /// Whether `plugin.request_flood` was audited since the plugin was last
    /// under the bound.
    pub(super) request_flood: AtomicBool,
    /// Bytes queued for the plugin's stdin, not written yet
    /// (bounds::MAX_STDIN_BACKLOG_BYTES).
    pub(super) backlog: AtomicUsize,
    /// How far the read loop has got with the plugin's stdout.
    pub(super) stdout: Arc<super::StdoutProgress>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    /// What a request handler is told about this plugin.
    pub(super) fn request_context(&self) -> RequestContext {
        RequestContext {
            plugin: self.plugin.clone(),
            manifest: self.cfg.manifest.clone(),
            audit: self.cfg.audit.clone(),
        }
    }

    pub(super) fn phase(&self) -> Phase {
        match self.phase.load(Ordering::SeqCst) {
            0 => Phase::Spawned,
            1 => Phase::InitializeSent,
            _ => Phase::Ready,
        }
    }

    /// Queue `line` for the writer; it is in the transcript from now on
    /// (recorded here, not when written, so the transcript has every host
    /// message in send order as soon as it is sent).
    pub(crate) fn send_encoded(&self, line: Vec<u8>) -> bool {
        if *self.closed.borrow() {
            return false;
        }
        // Recorded before it is queued: the plugin cannot answer a line
        // before the transcript has it.
        if let Some(body) = line.strip_suffix(b"\n") {
            self.cfg.transcript.record(Direction::HostToPlugin, body);
        }
        let queued = self.backlog.fetch_add(line.len(), Ordering::SeqCst) + line.len();
        if queued > MAX_STDIN_BACKLOG_BYTES {
            self.backlog.fetch_sub(line.len(), Ordering::SeqCst);
            if self.fatal.borrow().is_some() {
                // Already being killed (this, or another fatal error).
                return false;
            }
            let detail = format!(
                "{queued} bytes queued for the plugin's stdin and not read (bound {MAX_STDIN_BACKLOG_BYTES})"
            );
            self.audit(
                AuditEvent::ProtocolViolation,
                serde_json::json!({"violation_type": Violation::StdinBacklog.as_str(), "detail": detail}),
            );
            self.fail(Fatal {
                event: AuditEvent::ProtocolViolation,
                reason: Violation::StdinBacklog.as_str().to_string(),
                detail,
            });
            return false;
        }
        self.out.send(line).is_ok()
    }

    /// `n` bytes were written to the plugin's stdin.
    pub(super) fn written(&self, n: usize) {
        self.backlog.fetch_sub(n, Ordering::SeqCst);
    }

    pub(crate) fn fail(&self, fatal: Fatal) {
        {
            let mut g = lock(&self.ending);
            if matches!(*g, Ending::Running | Ending::ShuttingDown) {
                *g = Ending::Killing;
            }
        }
        self.fatal.send_if_modified(|f| {
            if f.is_none() {
                *f = Some(fatal);
                true
            } else {
                false
            }
        });
    }

    pub(crate) fn audit(&self, event: AuditEvent, data: Value) {
        self.cfg.audit.emit(event, &self.plugin, data);
    }

    pub(crate) fn push_stderr(&self, line: String) {
        let mut g = lock(&self.stderr);
        if g.len() == STDERR_RING {
            g.pop_front();
        }
        g.push_back(line);
    }

    pub(crate) fn limiter(&self) -> MutexGuard<'_, RateLimiter> {
        lock(&self.limiter)
    }

    pub(crate) fn mark_stderr_done(&self) {
        self.stderr_done.send_replace(true);
    }

    pub(crate) fn mark_closed(&self) {
        self.pending.fail_all();
        self.closed.send_replace(true);
    }
}
