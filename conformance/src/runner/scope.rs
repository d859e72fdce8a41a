//! One case's bookkeeping: its verdict, the audit mark taken when it began
//! and the wire transcripts it touched.

use std::time::Instant;

use kaged_host_sim::audit::AuditRecord;
use kaged_host_sim::transcript::{Transcript, TranscriptRecord};

use crate::catalogue::CaseDef;

/// What a case found, before levels and the baseline are applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The rule holds.
    Pass(String),
    /// The rule is broken (a SHOULD case becomes `warn`).
    Fail(String),
    /// The case could not run or does not apply.
    Skip(String),
}

impl Verdict {
    pub(crate) fn pass(s: impl Into<String>) -> Verdict {
        Verdict::Pass(s.into())
    }
    pub(crate) fn fail(s: impl Into<String>) -> Verdict {
        Verdict::Fail(s.into())
    }
    pub(crate) fn skip(s: impl Into<String>) -> Verdict {
        Verdict::Skip(s.into())
    }
}

/// A running case.
#[derive(Debug)]
pub(crate) struct Scope {
    /// The case id (`x` or `x[name]`).
    pub id: String,
    /// Its catalogue entry.
    pub def: &'static CaseDef,
    /// When it began.
    pub start: Instant,
    /// The audit length when it began.
    pub audit_mark: usize,
    /// Transcripts touched, with the record count when first touched.
    pub wires: Vec<(Transcript, usize)>,
    /// Audit records to report instead of those emitted during the case
    /// (handshake cases share one exchange; observations span the run).
    pub events: Option<Vec<AuditRecord>>,
}

impl Scope {
    /// Record that the case uses `t` from now on (once per transcript).
    pub fn touch(&mut self, t: &Transcript) {
        let n = t.records().len();
        self.touch_from(t, n);
    }

    /// Record that the case's share of `t` starts at record `from`.
    pub fn touch_from(&mut self, t: &Transcript, from: usize) {
        self.wires.push((t.clone(), from));
    }

    /// The case's transcript records, renumbered from 1.
    pub fn records(&self) -> Vec<TranscriptRecord> {
        let mut out: Vec<TranscriptRecord> = Vec::new();
        for (t, from) in &self.wires {
            out.extend(t.records().into_iter().skip(*from));
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
