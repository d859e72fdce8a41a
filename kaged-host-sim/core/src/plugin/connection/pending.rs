//! The map of requests awaiting an answer: id -> oneshot, and the ids
//! given up on (timed out, cancelled), whose late answer is expected.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use kaged_plugin_protocol::Response;
use tokio::sync::oneshot;

/// Requests in flight. Dropping a sender (see [`Pending::fail_all`]) tells
/// its caller that the connection closed.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    map: Mutex<Map>,
}

#[derive(Debug, Default)]
struct Map {
    waiting: HashMap<u64, oneshot::Sender<Response>>,
    given_up: HashSet<u64>,
}

/// What became of an answer.
#[derive(Debug)]
pub(crate) enum Completion {
    /// Delivered to its caller.
    Delivered,
    /// Its request was given up on (timed out, cancelled): a late answer,
    /// dropped.
    Late,
    /// No request of ours has this id, or it was answered already: the
    /// answer, handed back.
    Unknown(Response),
}

impl Pending {
    /// Register `id`.
    pub(crate) fn insert(&self, id: u64) -> oneshot::Receiver<Response> {
        let (tx, rx) = oneshot::channel();
        self.lock().waiting.insert(id, tx);
        rx
    }

    /// Forget `id`: answered, timed out or could not be sent. When it was
    /// still waiting, its answer may come late.
    pub(crate) fn remove(&self, id: u64) {
        let mut g = self.lock();
        if g.waiting.remove(&id).is_some() {
            g.given_up.insert(id);
        }
    }

    /// Deliver `response` to its caller; an answer no request of ours is
    /// waiting for is handed back ([`Completion::Unknown`]).
    pub(crate) fn complete(&self, id: u64, response: Response) -> Completion {
        let tx = {
            let mut g = self.lock();
            match g.waiting.remove(&id) {
                Some(tx) => tx,
                None if g.given_up.remove(&id) => return Completion::Late,
                None => return Completion::Unknown(response),
            }
        };
        // Sent with the lock released: the caller it wakes may take it at once.
        // The caller may have gone (dropped its future): not an error.
        let _ = tx.send(response);
        Completion::Delivered
    }

    /// Fail every pending request (the connection closed).
    pub(crate) fn fail_all(&self) {
        self.lock().waiting.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Map> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }
}
