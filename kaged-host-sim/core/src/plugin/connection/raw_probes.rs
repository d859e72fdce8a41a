//! What the raw channel sent and may still be answered: the ids of its
//! requests, and how many of its lines can only be answered with id null
//! (a line that is not JSON, a batch, an object that is not a valid
//! request). The reader asks it whether an answer was prompted by a probe
//! (only tapped; the probe judges it) or came unprompted (a violation).

use std::collections::{HashSet, VecDeque};
use std::sync::{Mutex, MutexGuard};

use kaged_plugin_protocol::{Id, RpcMessage};
use serde_json::Value;

/// The raw channel's outstanding probes.
#[derive(Debug, Default)]
pub(crate) struct RawProbes {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Ids of raw requests not answered yet.
    open_ids: HashSet<Id>,
    /// Every id of a raw request, answered or not.
    sent_ids: HashSet<Id>,
    /// Raw lines whose answer can only carry id null, not answered yet,
    /// oldest first: `true` for a batch.
    anonymous: VecDeque<bool>,
}

fn lock(m: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl RawProbes {
    /// Record a line sent on the raw channel.
    pub(crate) fn sent(&self, line: &[u8]) {
        let mut g = lock(&self.inner);
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            g.anonymous.push_back(false);
            return;
        };
        if v.is_array() {
            g.anonymous.push_back(true);
            return;
        }
        if let (Some(id), true) = (v.get("id"), v.get("method").is_some()) {
            g.open_ids.insert(Id::from_value(id));
            g.sent_ids.insert(Id::from_value(id));
        }
        let valid = matches!(
            RpcMessage::from_value(v),
            Ok(RpcMessage::Request(_) | RpcMessage::Notification(_))
        );
        if !valid {
            g.anonymous.push_back(false);
        }
    }

    /// Whether `id` answers a raw request (each id answers once).
    pub(crate) fn answers_request(&self, id: &Id) -> bool {
        lock(&self.inner).open_ids.remove(id)
    }

    /// Whether an answer with id null (or none) may answer a raw line: one
    /// that could only be answered so, or a raw request still unanswered
    /// (whose probe judges the wrong id).
    pub(crate) fn answers_anonymously(&self) -> bool {
        let mut g = lock(&self.inner);
        g.anonymous.pop_front().is_some() || !g.open_ids.is_empty()
    }

    /// Whether a batch from the plugin answers a raw batch (whose probe
    /// judges it).
    pub(crate) fn answers_batch(&self) -> bool {
        let mut g = lock(&self.inner);
        match g.anonymous.iter().position(|batch| *batch) {
            Some(i) => g.anonymous.remove(i).is_some(),
            None => false,
        }
    }

    /// Whether a request with this id went out on the raw channel.
    pub(crate) fn was_sent(&self, id: &Id) -> bool {
        lock(&self.inner).sent_ids.contains(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_prompted_only_by_what_could_prompt_it() {
        let p = RawProbes::default();
        assert!(!p.answers_anonymously(), "nothing was sent");
        p.sent(br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#);
        assert!(p.was_sent(&Id::from_value(&serde_json::json!("a"))));
        assert!(p.answers_anonymously(), "a wrong id for an open request");
        assert!(p.answers_request(&Id::from_value(&serde_json::json!("a"))));
        assert!(!p.answers_request(&Id::from_value(&serde_json::json!("a"))));
        assert!(!p.answers_anonymously(), "nothing is open any more");
        p.sent(b"{not json");
        p.sent(br#"{"jsonrpc":"2.0","method":"initialized"}"#);
        assert!(p.answers_anonymously());
        assert!(!p.answers_anonymously(), "a notification prompts nothing");
        p.sent(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert!(p.answers_batch());
        assert!(!p.answers_batch());
        assert!(!p.answers_anonymously(), "the batch was answered");
        p.sent(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert!(
            p.answers_anonymously(),
            "the batch rejected, as it should be"
        );
        assert!(!p.answers_batch(), "a later batch answers nothing");
    }
}
