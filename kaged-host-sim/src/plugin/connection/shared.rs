//! The state one connection's reader, writer and handle share.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
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
use crate::observe::audit::{AuditEvent, AuditLog};
use crate::observe::transcript::{Direction, Transcript};
use crate::requests::handler::PluginRequestHandler;
use crate::time::Timeouts;

/// How many stderr lines are kept for `plugin.crashed`.
pub const STDERR_RING: usize = 50;

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
    pub(super) next_id: AtomicU64,
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
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
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
        self.out.send(line).is_ok()
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
