//! [`Observations`]: what the whole run showed, gathered once every
//! session has ended — the run's audit events and every line the plugin
//! wrote to stderr, over every spawn. The observation cases judge these.

use kaged_host_sim::audit::{AuditEvent, AuditRecord};
use kaged_host_sim::transcript::{Direction, TranscriptRecord};

use super::context::RunContext;
use super::sessions::Sessions;

/// The whole run, seen from its end.
pub(crate) struct Observations {
    events: Vec<AuditRecord>,
    stderr: Vec<String>,
    plugin_requests: usize,
}

impl Observations {
    /// End the run's last session, wait (bounded) for the storage requests
    /// the plugin sent last, then gather what the run showed.
    pub async fn after_run(ctx: &RunContext, sessions: &mut Sessions) -> Observations {
        // Observations cover everything the plugin did, so the last spawn
        // ends first (a message sent just before is still counted).
        sessions.close_shared().await;
        let _ = ctx.in_flight.settle(ctx.timeouts.request).await;
        let records: Vec<TranscriptRecord> = sessions
            .transcripts()
            .iter()
            .flat_map(|t| t.records())
            .collect();
        let stderr = records
            .iter()
            .filter(|r| r.dir == Direction::PluginStderr)
            .filter_map(|r| r.msg.as_str().map(str::to_string))
            .collect();
        let plugin_requests = records
            .iter()
            .filter(|r| r.dir == Direction::PluginToHost)
            .filter(|r| r.msg.get("method").is_some() && r.msg.get("id").is_some())
            .count();
        Observations {
            events: ctx.audit.events(),
            stderr,
            plugin_requests,
        }
    }

    /// The run's audit records of `event`.
    pub fn of(&self, event: AuditEvent) -> Vec<AuditRecord> {
        self.events
            .iter()
            .filter(|r| r.event == event)
            .cloned()
            .collect()
    }

    /// How many requests the plugin sent (storage and the like).
    pub fn plugin_requests(&self) -> usize {
        self.plugin_requests
    }

    /// Every line the plugin wrote to stderr, spawn after spawn.
    pub fn stderr(&self) -> &[String] {
        &self.stderr
    }
}
