//! [`Observations`]: what the whole run showed, gathered once every
//! session has ended — the run's audit events and every line the plugin
//! wrote to stderr, over every spawn. The observation cases judge these.

use kaged_host_sim::audit::{AuditEvent, AuditRecord};
use kaged_host_sim::transcript::Direction;

use super::context::RunContext;
use super::sessions::Sessions;

/// The whole run, seen from its end.
pub(crate) struct Observations {
    events: Vec<AuditRecord>,
    stderr: Vec<String>,
}

impl Observations {
    /// End the run's last session, wait (bounded) for the storage requests
    /// the plugin sent last, then gather what the run showed.
    pub async fn after_run(ctx: &RunContext, sessions: &mut Sessions) -> Observations {
        // Observations cover everything the plugin did, so the last spawn
        // ends first (a message sent just before is still counted).
        sessions.close_shared().await;
        let _ = ctx.in_flight.settle(ctx.timeouts.request).await;
        let stderr = sessions
            .transcripts()
            .iter()
            .flat_map(|t| t.records())
            .filter(|r| r.dir == Direction::PluginStderr)
            .filter_map(|r| r.msg.as_str().map(str::to_string))
            .collect();
        Observations {
            events: ctx.audit.events(),
            stderr,
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

    /// Every line the plugin wrote to stderr, spawn after spawn.
    pub fn stderr(&self) -> &[String] {
        &self.stderr
    }
}
