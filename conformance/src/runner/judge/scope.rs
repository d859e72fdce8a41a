//! [`Scope`]: one running case's bookkeeping — when it began, the audit
//! mark taken then, and its attachments (the wire transcripts it touched,
//! or the audit events it reports instead of those emitted while it ran).

use std::time::Instant;

use kaged_host_core::{AuditRecord, Transcript, TranscriptRecord};

use crate::catalogue::CaseDef;

/// A running case.
#[derive(Debug)]
pub(crate) struct Scope {
    /// The case id (`x` or `x[name]`).
    pub id: String,
    /// Its catalogue entry.
    pub case: &'static CaseDef,
    /// When it began.
    pub start: Instant,
    /// The audit length when it began.
    pub audit_mark: usize,
    /// Transcripts touched, with the record count when first touched and,
    /// once the case ended ([`Scope::freeze`]), when it ended.
    wires: Vec<(Transcript, usize, Option<usize>)>,
    /// Audit records to report instead of those emitted during the case
    /// (handshake cases share one exchange; observations span the run).
    events: Option<Vec<AuditRecord>>,
    /// How long it ran, once it ended ([`Scope::freeze`]).
    took: Option<std::time::Duration>,
}

impl Scope {
    /// A case `id` of `case` beginning now, at audit length `audit_mark`.
    pub fn new(case: &'static CaseDef, id: String, audit_mark: usize) -> Scope {
        Scope {
            id,
            case,
            start: Instant::now(),
            audit_mark,
            wires: Vec::new(),
            events: None,
            took: None,
        }
    }

    /// Record that the case uses `t` from now on.
    pub fn touch(&mut self, t: &Transcript) {
        let n = t.records().len();
        self.touch_from(t, n);
    }

    /// Record that the case's share of `t` starts at record `from`.
    pub fn touch_from(&mut self, t: &Transcript, from: usize) {
        self.wires.push((t.clone(), from, None));
    }

    /// Report the whole of `t` and `events`, and nothing else (a case
    /// judged from one exchange made before it began).
    pub fn attach_exchange(&mut self, t: &Transcript, events: Vec<AuditRecord>) {
        self.wires.clear();
        self.touch_from(t, 0);
        self.events = Some(events);
    }

    /// Report `events` and no transcript (an observation of the whole run).
    pub fn attach_events(&mut self, events: Vec<AuditRecord>) {
        self.wires.clear();
        self.events = Some(events);
    }

    /// Report `events` as the case's audit events, keeping its transcripts
    /// (a case run in a lane: the lane's events while it ran).
    pub fn set_events(&mut self, events: Vec<AuditRecord>) {
        self.events = Some(events);
    }

    /// The case ended: its share of each transcript ends here (later cases
    /// of its lane use the same sessions, and it is recorded later).
    pub fn freeze(&mut self) {
        self.stop_clock();
        for (t, _, end) in &mut self.wires {
            *end = Some(t.records().len());
        }
    }

    /// The case's own work is done (its sessions may still wait for the
    /// shutdown barrier before they end): its duration ends here.
    pub fn stop_clock(&mut self) {
        self.took.get_or_insert_with(|| self.start.elapsed());
    }

    /// How long the case ran: until [`Scope::stop_clock`], else until now.
    pub fn took(&self) -> std::time::Duration {
        self.took.unwrap_or_else(|| self.start.elapsed())
    }

    /// The attached audit events, if the case reports its own.
    pub fn events(&self) -> Option<&[AuditRecord]> {
        self.events.as_deref()
    }

    /// The case's transcript records, renumbered from 1.
    pub fn records(&self) -> Vec<TranscriptRecord> {
        let mut out: Vec<TranscriptRecord> = Vec::new();
        for (t, from, end) in &self.wires {
            let records = t.records();
            let end = end.unwrap_or(records.len()).min(records.len());
            out.extend(records.into_iter().take(end).skip(*from));
        }
        for (i, r) in out.iter_mut().enumerate() {
            r.seq = i as u64 + 1;
        }
        out
    }
}

/// A file name for a case id (`/` cannot appear in a file name).
pub(crate) fn file_name(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| if c == '/' || c == '\0' { '_' } else { c })
        .collect();
    format!("{safe}.jsonl")
}
