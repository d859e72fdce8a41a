//! The wire transcript (ADDENDUM §9): one JSON Lines record per message or
//! stderr line, `{"seq": n, "dir": "host>plugin" | "plugin>host" |
//! "plugin!stderr", "msg": <json, or the raw line as a string>}`. Its
//! deterministic view for snapshots is the normal form ([`crate::normal`]).
//!
//! ```
//! use kaged_host_core::{Direction, Transcript};
//! let t = Transcript::memory();
//! t.record(Direction::HostToPlugin, br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
//! t.record(Direction::PluginStderr, b"not json");
//! let recs = t.records();
//! assert_eq!(recs[1].msg, serde_json::json!("not json"));
//! assert_eq!(recs[1].seq, 2);
//! ```

use std::path::Path;
use std::sync::MutexGuard;

use crate::bounds::{TRANSCRIPT_MEMORY_BYTES, TRANSCRIPT_MEMORY_RECORDS};

use kaged_plugin_protocol::text::cut;
use serde_json::{json, Value};

use super::audit::RecordError;
use super::jsonl::{Bounds, JsonLine, JsonlSink, Open, Sink};

/// Which way a line went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Host stdin write: `host>plugin`.
    HostToPlugin,
    /// Plugin stdout line: `plugin>host`.
    PluginToHost,
    /// Plugin stderr line: `plugin!stderr`.
    PluginStderr,
}

impl Direction {
    /// The `dir` string.
    pub const fn as_str(self) -> &'static str {
        match self {
            Direction::HostToPlugin => "host>plugin",
            Direction::PluginToHost => "plugin>host",
            Direction::PluginStderr => "plugin!stderr",
        }
    }

    /// The direction with this `dir` string.
    pub fn parse(s: &str) -> Option<Direction> {
        [
            Direction::HostToPlugin,
            Direction::PluginToHost,
            Direction::PluginStderr,
        ]
        .into_iter()
        .find(|d| d.as_str() == s)
    }
}

/// One transcript record.
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptRecord {
    /// Position in the transcript, from 1.
    pub seq: u64,
    /// Direction.
    pub dir: Direction,
    /// The parsed JSON, or the raw line as a string.
    pub msg: Value,
}

impl TranscriptRecord {
    /// The JSON Lines form.
    pub fn to_json(&self) -> Value {
        json!({"seq": self.seq, "dir": self.dir.as_str(), "msg": self.msg})
    }

    /// Read back a line written by [`TranscriptRecord::to_json`].
    ///
    /// ```
    /// use kaged_host_core::{Direction, TranscriptRecord};
    /// let line = serde_json::json!({"seq": 3, "dir": "plugin>host", "msg": {"id": 1}});
    /// let r = TranscriptRecord::from_json(&line).unwrap();
    /// assert_eq!((r.seq, r.dir), (3, Direction::PluginToHost));
    /// assert_eq!(r.to_json(), line);
    /// ```
    pub fn from_json(v: &Value) -> Result<TranscriptRecord, RecordError> {
        let seq = v
            .get("seq")
            .and_then(Value::as_u64)
            .ok_or(RecordError::Missing("seq"))?;
        let dir = v
            .get("dir")
            .and_then(Value::as_str)
            .ok_or(RecordError::Missing("dir"))?;
        let dir = Direction::parse(dir).ok_or_else(|| RecordError::Unknown {
            field: "dir",
            value: dir.to_string(),
        })?;
        let msg = v.get("msg").cloned().ok_or(RecordError::Missing("msg"))?;
        Ok(TranscriptRecord { seq, dir, msg })
    }
}

impl JsonLine for TranscriptRecord {
    fn to_json_line(&self) -> Value {
        self.to_json()
    }
}

/// What orders the records, kept with the sink under its lock.
#[derive(Default)]
struct Steps {
    /// The last `seq` given.
    seq: u64,
    /// The `seq` after which each step began.
    steps: Vec<u64>,
}

/// A clonable transcript handle writing to a file, memory, both or neither.
#[derive(Clone)]
pub struct Transcript {
    sink: JsonlSink<TranscriptRecord, Steps>,
}

impl Default for Transcript {
    fn default() -> Transcript {
        Transcript {
            sink: JsonlSink::new(
                "transcript",
                Some(Bounds {
                    records: TRANSCRIPT_MEMORY_RECORDS,
                    bytes: TRANSCRIPT_MEMORY_BYTES,
                }),
            ),
        }
    }
}

impl std::fmt::Debug for Transcript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transcript").finish_non_exhaustive()
    }
}

/// Raw lines longer than this are cut in the transcript (the wire is not).
const MAX_RAW_CHARS: usize = crate::bounds::TRANSCRIPT_RAW_CHARS;

impl Transcript {
    /// A transcript that keeps nothing.
    pub fn discard() -> Transcript {
        Transcript::default()
    }

    /// A transcript kept in memory.
    pub fn memory() -> Transcript {
        let t = Transcript::default();
        t.lock().keep_in_memory();
        t
    }

    /// A transcript written to `path` (truncated).
    pub fn to_file(path: &Path) -> std::io::Result<Transcript> {
        let t = Transcript::default();
        t.lock().open(path, Open::Truncate)?;
        Ok(t)
    }

    /// Also keep records in memory.
    pub fn with_memory(self) -> Transcript {
        self.lock().keep_in_memory();
        self
    }

    fn lock(&self) -> MutexGuard<'_, Sink<TranscriptRecord, Steps>> {
        self.sink.lock()
    }

    fn enabled(&self) -> bool {
        self.lock().is_enabled()
    }

    /// Record one line (without its newline): JSON when it parses, else the
    /// raw text (lossy UTF-8, cut to 4096 chars).
    pub fn record(&self, dir: Direction, line: &[u8]) {
        if !self.enabled() {
            return;
        }
        let msg = match serde_json::from_slice::<Value>(line) {
            Ok(v) if dir != Direction::PluginStderr => v,
            _ => Value::String(cut(&String::from_utf8_lossy(line), MAX_RAW_CHARS)),
        };
        self.record_sized(dir, msg, line.len());
    }

    /// Record an already built `msg` (e.g. a note about a discarded line).
    pub fn record_value(&self, dir: Direction, msg: Value) {
        if !self.enabled() {
            return;
        }
        let size = msg.to_string().len();
        self.record_sized(dir, msg, size);
    }

    /// Record `msg` of about `size` bytes; an in-memory transcript drops its
    /// oldest records past [`TRANSCRIPT_MEMORY_RECORDS`] or
    /// [`TRANSCRIPT_MEMORY_BYTES`].
    fn record_sized(&self, dir: Direction, msg: Value, size: usize) {
        let mut g = self.lock();
        if !g.is_enabled() {
            return;
        }
        g.extra.seq += 1;
        let rec = TranscriptRecord {
            seq: g.extra.seq,
            dir,
            msg,
        };
        g.write(rec, size);
    }

    /// Records dropped from memory to stay within the bounds.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped()
    }

    /// The records kept in memory.
    pub fn records(&self) -> Vec<TranscriptRecord> {
        self.lock().memory().cloned().collect()
    }

    /// Begin a step (a script step, a conformance case): the normal form
    /// ([`crate::normal`]) orders messages within their step. Not written
    /// to the file.
    pub fn mark_step(&self) {
        let mut g = self.lock();
        let Steps { seq, steps } = &mut g.extra;
        if steps.last() != Some(seq) {
            steps.push(*seq);
        }
    }

    /// The `seq` after which each step began, in order.
    pub fn steps(&self) -> Vec<u64> {
        self.lock().extra.steps.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_transcript_keeps_within_its_bounds() {
        let t = Transcript::memory();
        let n = TRANSCRIPT_MEMORY_RECORDS + 10;
        for i in 0..n {
            t.record(
                Direction::PluginToHost,
                format!("{{\"id\":{i}}}").as_bytes(),
            );
        }
        let kept = t.records();
        assert_eq!(kept.len(), TRANSCRIPT_MEMORY_RECORDS);
        assert_eq!(t.dropped(), 10);
        // The newest are kept.
        assert_eq!(kept.last().map(|r| r.seq), Some(n as u64));
        // By bytes: two records of more than half the bound keep only one.
        let t = Transcript::memory();
        let big = format!("\"{}\"", "x".repeat(TRANSCRIPT_MEMORY_BYTES / 2 + 1));
        t.record(Direction::PluginToHost, big.as_bytes());
        t.record(Direction::PluginToHost, big.as_bytes());
        assert_eq!(t.records().len(), 1);
        assert_eq!(t.dropped(), 1);
    }
}
