//! One JSON Lines sink for the host's records (the audit log, the wire
//! transcript): a file a record is written to as one line, a memory
//! buffer (bounded or not) tests and reports read, both or neither,
//! behind one lock shared by the clones of its handle.
//!
//! The owner keeps its own state (`extra`) under the same lock, so that
//! what orders the records (a transcript's `seq`) and their writing are
//! one step.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

/// A record written as one JSON line.
pub(crate) trait JsonLine {
    /// The line's JSON.
    fn to_json_line(&self) -> Value;
}

/// How much a memory buffer keeps: past either bound the oldest records
/// are dropped (the newest is always kept).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// At most this many records.
    pub records: usize,
    /// At most about this many bytes (the sizes the writer gives).
    pub bytes: usize,
}

/// How a file is opened.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Open {
    /// Created if missing, appended to.
    Append,
    /// Created if missing, emptied.
    Truncate,
}

/// A clonable handle to one sink; `X` is the owner's state kept under the
/// same lock.
pub(crate) struct JsonlSink<R, X = ()> {
    inner: Arc<Mutex<Sink<R, X>>>,
}

impl<R, X> Clone for JsonlSink<R, X> {
    fn clone(&self) -> Self {
        JsonlSink {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<R, X: Default> JsonlSink<R, X> {
    /// A sink that keeps nothing yet; `what` names it in warnings
    /// ("cannot write the {what}"), `bounds` bounds its memory buffer.
    pub(crate) fn new(what: &'static str, bounds: Option<Bounds>) -> Self {
        JsonlSink {
            inner: Arc::new(Mutex::new(Sink {
                what,
                bounds,
                file: None,
                memory: None,
                sizes: VecDeque::new(),
                bytes: 0,
                dropped: 0,
                extra: X::default(),
            })),
        }
    }
}

impl<R, X> JsonlSink<R, X> {
    /// The sink, locked (a panic while it was held does not lose it).
    pub(crate) fn lock(&self) -> MutexGuard<'_, Sink<R, X>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The sink's state, behind its lock.
pub(crate) struct Sink<R, X> {
    what: &'static str,
    bounds: Option<Bounds>,
    file: Option<File>,
    memory: Option<VecDeque<R>>,
    /// The size of each record kept in memory, in order (bounded only).
    sizes: VecDeque<usize>,
    /// Their sum.
    bytes: usize,
    /// Records dropped from memory to stay within the bounds.
    dropped: u64,
    /// The owner's state.
    pub(crate) extra: X,
}

impl<R: JsonLine, X> Sink<R, X> {
    /// Write records to `path` from now on.
    pub(crate) fn open(&mut self, path: &Path, how: Open) -> std::io::Result<()> {
        let mut options = OpenOptions::new();
        options.create(true);
        match how {
            Open::Append => options.append(true),
            Open::Truncate => options.write(true).truncate(true),
        };
        self.file = Some(options.open(path)?);
        Ok(())
    }

    /// Keep records in memory from now on (a buffer already kept stays).
    pub(crate) fn keep_in_memory(&mut self) {
        if self.memory.is_none() {
            self.memory = Some(VecDeque::new());
        }
    }

    /// Whether a record goes anywhere (a file or memory).
    pub(crate) fn is_enabled(&self) -> bool {
        self.file.is_some() || self.memory.is_some()
    }

    /// Write `rec` (about `size` bytes) as one line to the file, and keep
    /// it in memory, dropping the oldest past the bounds. A failed write
    /// is a warning: the host goes on.
    pub(crate) fn write(&mut self, rec: R, size: usize) {
        if let Some(file) = self.file.as_mut() {
            let mut line = rec.to_json_line().to_string();
            line.push('\n');
            if let Err(e) = file.write_all(line.as_bytes()) {
                tracing::warn!(error = %e, "cannot write the {}", self.what);
            }
        }
        let Some(mem) = self.memory.as_mut() else {
            return;
        };
        mem.push_back(rec);
        let Some(bounds) = self.bounds else {
            return;
        };
        self.sizes.push_back(size);
        self.bytes += size;
        while mem.len() > bounds.records || (self.bytes > bounds.bytes && mem.len() > 1) {
            mem.pop_front();
            self.bytes -= self.sizes.pop_front().unwrap_or(0);
            self.dropped += 1;
        }
    }
}

impl<R, X> Sink<R, X> {
    /// The records kept in memory, oldest first (none when memory is off).
    pub(crate) fn memory(&self) -> impl Iterator<Item = &R> {
        self.memory.iter().flatten()
    }

    /// How many records are kept in memory.
    pub(crate) fn len(&self) -> usize {
        self.memory.as_ref().map_or(0, VecDeque::len)
    }

    /// Records dropped from memory to stay within the bounds.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct N(u64);

    impl JsonLine for N {
        fn to_json_line(&self) -> Value {
            serde_json::json!({ "n": self.0 })
        }
    }

    #[test]
    fn lines_go_to_the_file_and_memory_keeps_within_bounds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        let sink: JsonlSink<N> = JsonlSink::new(
            "test sink",
            Some(Bounds {
                records: 2,
                bytes: 100,
            }),
        );
        {
            let mut g = sink.lock();
            assert!(!g.is_enabled());
            g.open(&path, Open::Truncate).unwrap();
            g.keep_in_memory();
            for n in 1..=3 {
                g.write(N(n), 10);
            }
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n");
        let g = sink
            .clone()
            .lock()
            .memory()
            .map(|r| r.0)
            .collect::<Vec<_>>();
        assert_eq!(g, [2, 3]);
        assert_eq!(sink.lock().dropped(), 1);
    }
}
