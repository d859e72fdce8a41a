//! The audit events resolution produces: data for the caller to emit
//! (resolution never writes into an audit log by itself).

use serde_json::Value;

use kaged_host_core::audit::{AuditEvent, AuditLog};

/// An audit event produced by resolution, for the caller to emit.
#[derive(Debug, Clone, PartialEq)]
pub struct HostEvent {
    /// The event.
    pub event: AuditEvent,
    /// The plugin it concerns (manifest name, or the declaration key when
    /// the package could not be resolved).
    pub plugin: String,
    /// The event's data (always includes `name`).
    pub data: Value,
}

impl HostEvent {
    /// Emit the event into `log`.
    pub fn emit(&self, log: &AuditLog) {
        log.emit(self.event, &self.plugin, self.data.clone());
    }

    /// A data member, or `Null`.
    pub fn get(&self, key: &str) -> &Value {
        self.data.get(key).unwrap_or(&Value::Null)
    }
}
