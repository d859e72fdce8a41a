//! The map of requests awaiting an answer: id -> oneshot.

use std::collections::HashMap;
use std::sync::Mutex;

use kaged_plugin_protocol::Response;
use tokio::sync::oneshot;

/// Requests in flight. Dropping a sender (see [`Pending::fail_all`]) tells
/// its caller that the connection closed.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    map: Mutex<HashMap<u64, oneshot::Sender<Response>>>,
}

impl Pending {
    /// Register `id`.
    pub(crate) fn insert(&self, id: u64) -> oneshot::Receiver<Response> {
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id, tx);
        rx
    }

    /// Forget `id` (timed out or could not be sent).
    pub(crate) fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// Deliver `response` to its caller; `false` when its id is not pending.
    pub(crate) fn complete(&self, id: u64, response: Response) -> bool {
        match self.lock().remove(&id) {
            Some(tx) => {
                // The caller may have gone (dropped its future): not an error.
                let _ = tx.send(response);
                true
            }
            None => false,
        }
    }

    /// Fail every pending request (the connection closed).
    pub(crate) fn fail_all(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, oneshot::Sender<Response>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }
}
