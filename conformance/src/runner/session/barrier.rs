//! The shutdown barrier: `lifecycle.shutdown_exits_zero` runs first and
//! judges, once per run, whether the plugin exits on `shutdown` within its
//! budget. Every other session waits for that judgement before it ends
//! (its case's verdict is already known), so how a session ends never
//! depends on `--jobs` or on which case finished first: when the plugin
//! honours `shutdown`, sessions end gracefully as the daemon ends them;
//! when it does not, they end at once (SIGTERM, then SIGKILL) instead of
//! waiting out the shutdown budget again, and the case's detail says so
//! ([`QUICK_END_NOTE`]).

use tokio::sync::watch;

use kaged_host_core::PluginHandle;

/// What `lifecycle.shutdown_exits_zero` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shutdown {
    /// The plugin exited 0 within its budget: end sessions gracefully.
    Honoured,
    /// It did not: end sessions at once.
    Ignored,
    /// The case did not judge it (deselected, no session, not run): end
    /// sessions gracefully.
    Unjudged,
}

/// The detail line of a case whose session was ended at once.
pub(crate) const QUICK_END_NOTE: &str = "(its session was ended at once with SIGTERM, then SIGKILL: lifecycle.shutdown_exits_zero already judged that the plugin does not exit on shutdown in time)";

/// The run's judgement, set once by the barrier case and read by every
/// session of the run. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Barrier {
    tx: std::sync::Arc<watch::Sender<Option<Shutdown>>>,
}

impl Barrier {
    /// A barrier not yet judged.
    pub fn new() -> Barrier {
        let (tx, _) = watch::channel(None);
        Barrier {
            tx: std::sync::Arc::new(tx),
        }
    }

    /// A barrier already judged `how` (a run without the barrier case).
    pub fn judged(how: Shutdown) -> Barrier {
        let b = Barrier::new();
        b.set(how);
        b
    }

    /// Record the judgement (the first one counts).
    pub fn set(&self, how: Shutdown) {
        self.tx.send_if_modified(|v| {
            if v.is_none() {
                *v = Some(how);
                true
            } else {
                false
            }
        });
    }

    /// Wait for the judgement.
    pub async fn wait(&self) -> Shutdown {
        let mut rx = self.tx.subscribe();
        let judged = match rx.wait_for(Option::is_some).await {
            Ok(v) => *v,
            // The sender lives in `self`: it cannot be dropped here.
            Err(_) => None,
        };
        judged.unwrap_or(Shutdown::Unjudged)
    }
}

/// The `plugin.killed` reason of a session ended at once.
pub(crate) const JUDGED: &str =
    "conformance: shutdown already judged (lifecycle.shutdown_exits_zero)";

/// End a spawn at once: SIGTERM to its process group, the scaled grace,
/// then SIGKILL (audited `plugin.killed {reason, via}`).
pub(crate) async fn end_at_once(s: &PluginHandle, reason: &str) {
    if s.is_running() {
        s.terminate(reason).await;
    }
}
