//! What the plugin sent while serving a call: a plugin message recorded
//! while exactly one host request of its step was in flight is shown
//! between that request and its answer (`docs/protocol.md` § Normal-form
//! transcripts, rule 2), so a storage request reads under the call it
//! served.

use super::item::{Item, Kind};

/// Which part of an item a place in the order shows.
#[derive(Debug, Clone, Copy)]
pub(super) enum Part {
    /// The message and its answer.
    Whole,
    /// A host request whose answer comes after what the plugin sent while
    /// serving it.
    Request,
    /// That request's answer.
    Answer,
}

/// The one host request of `host` that was in flight when the plugin sent
/// `it` (sent before it, answered after it or never): the call it served.
/// `None` when none or several were (concurrent calls), or for an answer.
pub(super) fn serving(host: &[&Item], it: &Item) -> Option<usize> {
    if it.kind == Kind::Answer {
        return None;
    }
    let at = it.first.seq;
    let mut in_flight = host.iter().enumerate().filter(|(_, h)| {
        h.kind == Kind::HostRequest && h.first.seq < at && h.answer.is_none_or(|a| a.seq > at)
    });
    match (in_flight.next(), in_flight.next()) {
        (Some((i, _)), None) => Some(i),
        _ => None,
    }
}
