//! The units the normal order is made of: each wire record's kind, and a
//! message with the answer it got.

use crate::transcript::{Direction, TranscriptRecord};

/// What a record is, for ordering and renumbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    HostRequest,
    PluginRequest,
    /// An answer sent by this direction.
    Answer,
    /// A notification or anything else.
    Other,
}

pub(super) fn kind(r: &TranscriptRecord) -> Kind {
    let m = &r.msg;
    let method = m.get("method").is_some();
    let id = m.get("id").is_some_and(|i| !i.is_null());
    match (r.dir, method, id) {
        (Direction::HostToPlugin, true, true) => Kind::HostRequest,
        (Direction::PluginToHost, true, true) => Kind::PluginRequest,
        (_, false, _) if m.get("result").is_some() || m.get("error").is_some() => Kind::Answer,
        _ => Kind::Other,
    }
}

/// One unit of the normal order: a message, with the answer it got.
pub(super) struct Item<'a> {
    pub(super) first: &'a TranscriptRecord,
    pub(super) answer: Option<&'a TranscriptRecord>,
    pub(super) kind: Kind,
}
