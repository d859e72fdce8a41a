//! Each plugin's recent lifecycle events: the restart history the settings
//! page shows (`GET /api/v1/plugins/<name>/history`).
//!
//! The daemon keeps no audit log in memory (a long-running daemon would
//! grow without bound); this keeps the last [`HISTORY_LEN`] lifecycle
//! records per plugin, fed by a subscription to the audit log.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::broadcast::{error::RecvError, Receiver};
use tokio::task::JoinHandle;

use super::lines::is_lifecycle;
use kaged_host_core::audit::AuditRecord;

/// How many lifecycle records are kept per plugin.
pub const HISTORY_LEN: usize = 32;

/// The last [`HISTORY_LEN`] lifecycle records of each plugin.
#[derive(Debug, Default)]
pub(super) struct History {
    by_plugin: Mutex<HashMap<String, VecDeque<Value>>>,
}

impl History {
    /// Keep `record` when it is a lifecycle event.
    fn record(&self, record: &AuditRecord) {
        if !is_lifecycle(record.event) {
            return;
        }
        let mut map = self.by_plugin.lock().unwrap_or_else(|p| p.into_inner());
        let list = map.entry(record.plugin.clone()).or_default();
        if list.len() == HISTORY_LEN {
            list.pop_front();
        }
        list.push_back(record.to_json());
    }

    /// The kept records of `plugin`, oldest first.
    pub(super) fn of(&self, plugin: &str) -> Vec<Value> {
        let map = self.by_plugin.lock().unwrap_or_else(|p| p.into_inner());
        map.get(plugin)
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Feed `history` from `events` until the audit log closes.
    pub(super) fn spawn_recorder(
        history: Arc<History>,
        mut events: Receiver<AuditRecord>,
    ) -> JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(r) => history.record(&r),
                    Err(RecvError::Lagged(n)) => {
                        tracing::warn!(missed = n, "lifecycle history lagged");
                    }
                    Err(RecvError::Closed) => return,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kaged_host_core::audit::{AuditEvent, AuditLog};
    use serde_json::json;

    #[test]
    fn keeps_only_lifecycle_events_and_only_the_last_ones() {
        let log = AuditLog::memory();
        for pid in 0..(HISTORY_LEN as u64 + 3) {
            log.emit(AuditEvent::Spawned, "echo", json!({"pid": pid}));
            log.emit(AuditEvent::MethodCalled, "echo", json!({}));
        }
        let h = History::default();
        for r in log.events() {
            h.record(&r);
        }
        let kept = h.of("echo");
        assert_eq!(kept.len(), HISTORY_LEN);
        assert!(kept.iter().all(|r| r["event"] == "plugin.spawned"));
        assert_eq!(kept[0]["pid"], 3);
        assert_eq!(kept[HISTORY_LEN - 1]["pid"], HISTORY_LEN as u64 + 2);
        assert!(h.of("other").is_empty());
    }
}
