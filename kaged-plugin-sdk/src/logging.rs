//! Logging: `tracing` events as JSON lines on stderr, never stdout.
//!
//! The level comes from `KAGED_LOG_LEVEL` (set by the daemon: `trace`,
//! `debug`, `info`, `warn`, `error`, any case; `off` silences; default
//! `info`). The runtime calls [`init`] before serving; plugins log with the
//! ordinary `tracing` macros, re-exported as [`crate::log`].
//!
//! Each event is one line, in the shape `tracing-subscriber`'s JSON format
//! had (the SDK no longer links it): `{"timestamp":"2026-01-02T03:04:05.
//! 678901Z","level":"INFO","fields":{"message":"...","key":1},"target":
//! "my_plugin"}`. Spans are not tracked: an event inside a span is written
//! alone. A plugin that wants more (spans, filters per target, another
//! format) installs its own subscriber before `run`; [`init`] keeps it.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// The variable the daemon sets to the configured log level.
pub const LOG_LEVEL_VAR: &str = "KAGED_LOG_LEVEL";

/// Install the stderr JSON subscriber ([`StderrLog::from_env`]). Harmless
/// when a subscriber is already installed (the existing one is kept).
pub fn init() {
    let _ = tracing::subscriber::set_global_default(StderrLog::from_env());
}

/// The level a `KAGED_LOG_LEVEL` value names: `trace` .. `error` or `off`,
/// any case, surrounding blanks ignored; `None` for anything else.
///
/// ```
/// use kaged_plugin_sdk::logging::parse_level;
/// use tracing::level_filters::LevelFilter;
/// assert_eq!(parse_level(" WARN "), Some(LevelFilter::WARN));
/// assert_eq!(parse_level("loud"), None);
/// ```
pub fn parse_level(value: &str) -> Option<LevelFilter> {
    match value.trim().to_ascii_lowercase().as_str() {
        "trace" => Some(LevelFilter::TRACE),
        "debug" => Some(LevelFilter::DEBUG),
        "info" => Some(LevelFilter::INFO),
        "warn" | "warning" => Some(LevelFilter::WARN),
        "error" => Some(LevelFilter::ERROR),
        "off" => Some(LevelFilter::OFF),
        _ => None,
    }
}

/// A minimal `tracing` subscriber: events at or above a level, one JSON
/// line each, to stderr.
#[derive(Debug)]
pub struct StderrLog {
    max: LevelFilter,
    next_span: AtomicU64,
    #[cfg(test)]
    captured: Option<std::sync::Arc<std::sync::Mutex<Vec<u8>>>>,
}

impl StderrLog {
    /// A subscriber writing events at `max` and more severe.
    pub fn new(max: LevelFilter) -> StderrLog {
        StderrLog {
            max,
            next_span: AtomicU64::new(1),
            #[cfg(test)]
            captured: None,
        }
    }

    /// A subscriber at the level `KAGED_LOG_LEVEL` names (`info` when it
    /// is unset or names no level).
    pub fn from_env() -> StderrLog {
        let level = std::env::var(LOG_LEVEL_VAR).ok();
        StderrLog::new(
            level
                .as_deref()
                .and_then(parse_level)
                .unwrap_or(LevelFilter::INFO),
        )
    }

    fn write(&self, line: &[u8]) {
        #[cfg(test)]
        if let Some(buf) = &self.captured {
            if let Ok(mut b) = buf.lock() {
                b.extend_from_slice(line);
            }
            return;
        }
        // One write per line, under the lock, so that lines never mix.
        let _ = std::io::stderr().lock().write_all(line);
    }
}

impl Subscriber for StderrLog {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= self.max
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(self.max)
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(self.next_span.fetch_add(1, Ordering::Relaxed))
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = JsonFields(Map::new());
        event.record(&mut fields);
        let meta = event.metadata();
        let mut line = Map::new();
        line.insert("timestamp".into(), Value::String(rfc3339_now()));
        line.insert("level".into(), Value::String(meta.level().as_str().into()));
        line.insert("fields".into(), Value::Object(fields.0));
        line.insert("target".into(), Value::String(meta.target().into()));
        if let Ok(mut bytes) = serde_json::to_vec(&Value::Object(line)) {
            bytes.push(b'\n');
            self.write(&bytes);
        }
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

/// An event's fields as a JSON object: numbers and booleans as such, the
/// rest as text (`Debug`, or `Display` for errors).
struct JsonFields(Map<String, Value>);

impl Visit for JsonFields {
    fn record_f64(&mut self, field: &Field, value: f64) {
        let v = serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number);
        self.0.insert(field.name().into(), v);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0.insert(field.name().into(), value.to_string().into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().into(), format!("{value:?}").into());
    }
}

/// Now, as RFC 3339 UTC with microseconds.
fn rfc3339_now() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339(d.as_secs(), d.subsec_micros())
}

/// `secs` after the epoch (and `micros`), as `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
fn rfc3339(secs: u64, micros: u32) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`, for non-negative days).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(rfc3339(951_782_400, 5), "2000-02-29T00:00:00.000005Z");
        assert_eq!(
            rfc3339(1_767_323_045, 678_901),
            "2026-01-02T03:04:05.678901Z"
        );
    }

    #[test]
    fn levels_parse_in_any_case_and_junk_is_none() {
        assert_eq!(parse_level("trace"), Some(LevelFilter::TRACE));
        assert_eq!(parse_level("Error"), Some(LevelFilter::ERROR));
        assert_eq!(parse_level("off"), Some(LevelFilter::OFF));
        assert_eq!(parse_level("kaged=debug"), None);
    }

    #[test]
    fn events_at_the_level_become_json_lines() {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let mut log = StderrLog::new(LevelFilter::INFO);
        log.captured = Some(Arc::clone(&buf));
        tracing::subscriber::with_default(log, || {
            tracing::debug!("hidden");
            let span = tracing::info_span!("outer");
            let _in = span.enter();
            tracing::warn!(n = 3, ok = true, who = "me", "seen {}", 1);
        });
        let text = String::from_utf8(buf.lock().expect("lock").clone()).expect("utf-8");
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        assert_eq!(lines.len(), 1, "{text}");
        let e = &lines[0];
        assert_eq!(e["level"], "WARN");
        assert_eq!(
            e["fields"],
            serde_json::json!({"message": "seen 1", "n": 3, "ok": true, "who": "me"})
        );
        assert!(e["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')));
        assert_eq!(e["target"], module_path!());
    }
}
