//! Audit events as data, and the audit log (ADDENDUM §9).
//!
//! Every event name the host can emit is a variant of [`AuditEvent`]; the
//! table [`AuditEvent::ALL`] is the one place names are written. It holds
//! every event of the spec's audit table, plus:
//!
//! * `plugin.stopped`, named by "Graceful shutdown" but absent from the table;
//! * `plugin.initialize_timeout`, `plugin.api_mismatch` and
//!   `plugin.name_mismatch`, named by the "Handshake failure modes" table
//!   but absent from the audit table, and `initialize.version_mismatch`,
//!   as the field table writes it (ADDENDUM §16: names as the spec writes
//!   them);
//! * `plugin.no_sandbox_ignored`, for the daemon's `--no-sandbox` that
//!   never uncages a plugin (ADDENDUM §13);
//! * `protocol.oversize_message`, `compaction.failed` and
//!   `compaction.completed` (ADDENDUM §9).
//!
//! ```
//! use kaged_host_core::{AuditEvent, AuditLog};
//! let log = AuditLog::memory();
//! log.emit(AuditEvent::Spawned, "good", serde_json::json!({"version": "1.0.0", "pid": 42}));
//! assert_eq!(log.names(), ["plugin.spawned"]);
//! let line = log.events()[0].to_json();
//! assert_eq!(line["plugin"], "good");
//! assert_eq!(line["pid"], 42);
//! assert_eq!(AuditEvent::parse("plugin.killed"), Some(AuditEvent::Killed));
//! ```

pub use super::request_scope::{current_request_id, with_request_id, with_request_id_blocking};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, MutexGuard};
use std::time::SystemTime;

use serde_json::{Map, Value};

use super::jsonl::{JsonLine, JsonlSink, Open, Sink};

pub use super::violation::Violation;

pub use super::audit_event::AuditEvent;

/// One emitted event.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditRecord {
    /// When it was emitted.
    pub ts: SystemTime,
    /// The event.
    pub event: AuditEvent,
    /// The plugin it concerns.
    pub plugin: String,
    /// The event's data (always includes `name`).
    pub data: Map<String, Value>,
}

impl AuditRecord {
    /// The ADDENDUM §9 line: `{"ts", "event", "plugin", ...data}`.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert(
            "ts".into(),
            Value::String(humantime::format_rfc3339_millis(self.ts).to_string()),
        );
        obj.insert("event".into(), Value::String(self.event.as_str().into()));
        obj.insert("plugin".into(), Value::String(self.plugin.clone()));
        for (k, v) in &self.data {
            if !obj.contains_key(k) {
                obj.insert(k.clone(), v.clone());
            }
        }
        Value::Object(obj)
    }

    /// The record in words, for a report: its event, its kind
    /// (`violation_type`), why (`detail`), and the line the plugin sent
    /// (`line`), quoted; other data as `key=value`, without the `name`
    /// every record carries, the ids that differ run after run (pid, cage,
    /// request) and a crash's stderr.
    ///
    /// ```
    /// use kaged_host_core::{AuditEvent, AuditLog};
    /// let log = AuditLog::memory();
    /// log.emit(AuditEvent::ProtocolViolation, "p", serde_json::json!({
    ///     "violation_type": "invalid_message", "detail": "missing member \"jsonrpc\"",
    ///     "line": "{\"debug\":true}", "truncated": false}));
    /// assert_eq!(log.events()[0].describe(),
    ///     "plugin.protocol_violation invalid_message: missing member \"jsonrpc\"; the plugin sent: `{\"debug\":true}`");
    /// ```
    pub fn describe(&self) -> String {
        // Shown apart, or left out: what differs run after run (the pid,
        // the cage and request ids) and the stderr a crash keeps.
        const SHOWN: [&str; 11] = [
            "violation_type",
            "detail",
            "line",
            "truncated",
            "name",
            "pid",
            "cage_id",
            "request_id",
            "user_id",
            "last_stderr",
            "duration_ms",
        ];
        let mut out = self.event.as_str().to_string();
        if let Some(kind) = self.get("violation_type").as_str() {
            out.push_str(&format!(" {kind}"));
        }
        if let Some(why) = self.get("detail").as_str() {
            out.push_str(&format!(": {why}"));
        }
        let rest: Vec<String> = self
            .data
            .iter()
            .filter(|(k, _)| !SHOWN.contains(&k.as_str()))
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect();
        if !rest.is_empty() {
            out.push_str(&format!(" ({})", rest.join(", ")));
        }
        if let Some(line) = self.get("line").as_str() {
            let more = if self.get("truncated") == true {
                "…"
            } else {
                ""
            };
            out.push_str(&format!("; the plugin sent: `{line}{more}`"));
        }
        out
    }

    /// A data member, or `Null`.
    pub fn get(&self, key: &str) -> &Value {
        self.data.get(key).unwrap_or(&Value::Null)
    }

    /// Read back a line written by [`AuditRecord::to_json`] (a stored
    /// audit log, judged offline).
    ///
    /// ```
    /// use kaged_host_core::{AuditEvent, AuditLog, AuditRecord};
    /// let log = AuditLog::memory();
    /// log.emit(AuditEvent::Killed, "p", serde_json::json!({"reason": "x"}));
    /// let line = log.events()[0].to_json();
    /// let back = AuditRecord::from_json(&line).unwrap();
    /// assert_eq!(back.event, AuditEvent::Killed);
    /// assert_eq!(back.get("reason"), "x");
    /// assert_eq!(back.to_json(), line);
    /// ```
    pub fn from_json(v: &Value) -> Result<AuditRecord, RecordError> {
        let obj = v.as_object().ok_or(RecordError::NotAnObject)?;
        let text = |k: &'static str| {
            obj.get(k)
                .and_then(Value::as_str)
                .ok_or(RecordError::Missing(k))
        };
        let name = text("event")?;
        let event = AuditEvent::parse(name).ok_or_else(|| RecordError::Unknown {
            field: "event",
            value: name.to_string(),
        })?;
        let ts = humantime::parse_rfc3339(text("ts")?).map_err(|_| RecordError::Unknown {
            field: "ts",
            value: text("ts").unwrap_or_default().to_string(),
        })?;
        let plugin = text("plugin")?.to_string();
        let data = obj
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "ts" | "event" | "plugin"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(AuditRecord {
            ts,
            event,
            plugin,
            data,
        })
    }
}

impl JsonLine for AuditRecord {
    fn to_json_line(&self) -> Value {
        self.to_json()
    }
}

/// Why a stored audit or transcript line cannot be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The line is not a JSON object.
    #[error("not a JSON object")]
    NotAnObject,
    /// A member is missing (or not of its type).
    #[error("missing member {0:?}")]
    Missing(&'static str),
    /// A member has a value no record has.
    #[error("unknown {field} {value:?}")]
    Unknown {
        /// The member.
        field: &'static str,
        /// What it held.
        value: String,
    },
}

/// Live subscribers, kept with the sink under its lock.
type Live = Option<tokio::sync::broadcast::Sender<AuditRecord>>;

/// A clonable handle to the audit log: a JSON Lines file, a memory buffer
/// (for tests), both or neither.
#[derive(Clone)]
pub struct AuditLog {
    sink: JsonlSink<AuditRecord, Live>,
    /// Whether any sink (file, memory, live subscribers) is set: a log
    /// with none skips building records ([`AuditLog::emit_with`]).
    active: Arc<AtomicBool>,
    /// Fields this handle adds to every record it emits (see
    /// [`AuditLog::tagged`]); other handles of the same log are unaffected.
    tags: Arc<Map<String, Value>>,
}

impl Default for AuditLog {
    fn default() -> AuditLog {
        AuditLog {
            sink: JsonlSink::new("audit log", None),
            active: Arc::default(),
            tags: Arc::default(),
        }
    }
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog").finish_non_exhaustive()
    }
}

impl AuditLog {
    /// A log that keeps nothing.
    pub fn discard() -> AuditLog {
        AuditLog::default()
    }

    /// A log kept in memory only.
    pub fn memory() -> AuditLog {
        let log = AuditLog::default();
        log.lock().keep_in_memory();
        log.active.store(true, Ordering::Release);
        log
    }

    /// A log appended to `path` (created if missing).
    pub fn to_file(path: &Path) -> std::io::Result<AuditLog> {
        let log = AuditLog::default();
        log.lock().open(path, Open::Append)?;
        log.active.store(true, Ordering::Release);
        Ok(log)
    }

    /// A handle to the same log that adds `key: value` to the data of every
    /// record it emits, unless the record sets `key` itself. A host running
    /// its plugins with `--cage off` audits through
    /// `audit.tagged("cage", "off")` (ADDENDUM §15).
    ///
    /// ```
    /// use kaged_host_core::{AuditEvent, AuditLog};
    /// let log = AuditLog::memory();
    /// log.tagged("cage", "off").emit(AuditEvent::Stopped, "p", serde_json::json!({}));
    /// log.emit(AuditEvent::Stopped, "q", serde_json::json!({}));
    /// let events = log.events();
    /// assert_eq!(events[0].data["cage"], "off");
    /// assert!(events[1].data.get("cage").is_none());
    /// ```
    pub fn tagged(&self, key: &str, value: impl Into<Value>) -> AuditLog {
        let mut tags = (*self.tags).clone();
        tags.insert(key.to_string(), value.into());
        AuditLog {
            tags: Arc::new(tags),
            ..self.clone()
        }
    }

    /// Also keep events in memory.
    pub fn with_memory(self) -> AuditLog {
        self.lock().keep_in_memory();
        self.active.store(true, Ordering::Release);
        self
    }

    /// Whether anything keeps or watches the events (a file, memory, a
    /// subscriber); when not, [`AuditLog::emit_with`] builds nothing.
    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// [`AuditLog::emit`] with the data built only when something keeps
    /// or watches the events: what the per-call paths use, so that a host
    /// without an audit sink pays nothing for the records it would drop.
    pub fn emit_with(&self, event: AuditEvent, plugin: &str, data: impl FnOnce() -> Value) {
        if self.is_active() {
            self.emit(event, plugin, data());
        }
    }

    fn lock(&self) -> MutexGuard<'_, Sink<AuditRecord, Live>> {
        self.sink.lock()
    }

    /// Emit `event` for `plugin` with `data` (an object; anything else is
    /// stored under `"data"`). `name` is added to the data when absent.
    pub fn emit(&self, event: AuditEvent, plugin: &str, data: Value) {
        let mut data = match data {
            Value::Object(o) => o,
            Value::Null => Map::new(),
            other => Map::from_iter([("data".to_string(), other)]),
        };
        data.entry("name")
            .or_insert_with(|| Value::String(plugin.to_string()));
        for (key, value) in self.tags.iter() {
            data.entry(key).or_insert_with(|| value.clone());
        }
        if let Some(id) = current_request_id() {
            data.entry("request_id").or_insert(Value::String(id));
        }
        let record = AuditRecord {
            ts: SystemTime::now(),
            event,
            plugin: plugin.to_string(),
            data,
        };
        tracing::debug!(plugin, event = event.as_str(), "audit");
        let mut g = self.lock();
        if let Some(live) = g.extra.as_ref() {
            // No receiver left is fine: nobody is watching.
            let _ = live.send(record.clone());
        }
        g.write(record, 0);
    }

    /// Every event emitted from now on, as it is emitted (a receiver that
    /// falls more than 1024 events behind loses the oldest: `Lagged`).
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<AuditRecord> {
        self.active.store(true, Ordering::Release);
        self.lock()
            .extra
            .get_or_insert_with(|| tokio::sync::broadcast::channel(crate::bounds::FANOUT_QUEUE).0)
            .subscribe()
    }

    /// Every event kept in memory, in order.
    pub fn events(&self) -> Vec<AuditRecord> {
        self.lock().memory().cloned().collect()
    }

    /// The names of the events kept in memory, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.lock().memory().map(|r| r.event.as_str()).collect()
    }

    /// The events of one kind kept in memory.
    pub fn of(&self, event: AuditEvent) -> Vec<AuditRecord> {
        self.lock()
            .memory()
            .filter(|r| r.event == event)
            .cloned()
            .collect()
    }

    /// How many events are kept in memory (a mark for [`AuditLog::since`]).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no event is kept in memory.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The events kept in memory after the first `mark`.
    pub fn since(&self, mark: usize) -> Vec<AuditRecord> {
        self.lock().memory().skip(mark).cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_lines_follow_addendum_9() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::to_file(&path).unwrap();
        log.emit(AuditEvent::Killed, "p", serde_json::json!({"reason": "x"}));
        let text = std::fs::read_to_string(&path).unwrap();
        let v: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(v["event"], "plugin.killed");
        assert_eq!(v["plugin"], "p");
        assert_eq!(v["reason"], "x");
        let ts = v["ts"].as_str().unwrap();
        assert!(
            humantime::parse_rfc3339(ts).is_ok() && ts.ends_with('Z'),
            "{ts}"
        );
    }
}
