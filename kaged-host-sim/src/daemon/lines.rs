//! The human line `up` prints per lifecycle event.

use serde_json::Value;

use kaged_host_core::audit::{AuditEvent, AuditRecord};
use kaged_host_core::visible::visible;

/// The human line for `record` when it is a lifecycle event (spawned,
/// initialized, crashed, exited, stopped, killed, health failure, failed,
/// enabled, disabled); `None` for any other event. Control characters in
/// the values are escaped (`kaged_host_core::visible`).
///
/// ```
/// use kaged_host_sim::daemon::lifecycle_line;
/// use kaged_host_core::{AuditLog, AuditEvent};
/// let log = AuditLog::memory();
/// log.emit(AuditEvent::Spawned, "echo", serde_json::json!({"pid": 42}));
/// log.emit(AuditEvent::MethodCalled, "echo", serde_json::json!({}));
/// log.emit(AuditEvent::Killed, "echo", serde_json::json!({"reason": "x\recho: ok"}));
/// let lines: Vec<_> = log.events().iter().filter_map(lifecycle_line).collect();
/// assert_eq!(lines, ["echo: plugin.spawned pid=42", "echo: plugin.killed reason=x\\recho: ok"]);
/// ```
pub fn lifecycle_line(record: &AuditRecord) -> Option<String> {
    if !is_lifecycle(record.event) {
        return None;
    }
    let mut line = format!("{}: {}", record.plugin, record.event.as_str());
    for (k, v) in &record.data {
        if k == "name" || v.is_null() || v.is_object() || v.is_array() {
            continue;
        }
        let v = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        // A value may quote the plugin (a reason, a path): never let it
        // move the terminal.
        line.push_str(&format!(" {}={}", visible(k), visible(&v)));
    }
    Some(line)
}

/// Whether `event` is a lifecycle event: spawned, initialized, crashed,
/// exited, stopped, killed, health failure, failed, enabled, disabled.
pub fn is_lifecycle(event: AuditEvent) -> bool {
    use AuditEvent as E;
    matches!(
        event,
        E::Spawned
            | E::Initialized
            | E::Crashed
            | E::Exited
            | E::Stopped
            | E::Killed
            | E::HealthFail
            | E::Failed
            | E::Enabled
            | E::Disabled
    )
}
