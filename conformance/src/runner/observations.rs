//! [`Observations`]: what the whole run showed, gathered once every
//! session has ended — the run's audit events and every wire record of
//! every spawn — with what it ran under (the manifest, the request and
//! hook budgets). The observation cases judge only these, so a stored run
//! (`run --transcript-dir`) is judged offline the same way
//! (`crate::judge`).

use std::sync::Arc;
use std::time::Duration;

use kaged_host_core::audit::{AuditEvent, AuditRecord};
use kaged_host_core::transcript::{Direction, TranscriptRecord};
use kaged_plugin_protocol::manifest::Manifest;

use super::context::RunContext;
use super::sessions::Sessions;

/// The whole run, seen from its end.
pub(crate) struct Observations {
    /// The plugin's manifest.
    pub manifest: Arc<Manifest>,
    /// The request timeout of the run.
    pub request_budget: Duration,
    /// The hook timeout of the run.
    pub hook_budget: Duration,
    events: Vec<AuditRecord>,
    wire: Vec<TranscriptRecord>,
}

impl Observations {
    /// End the run's last session, wait (bounded) for the storage requests
    /// the plugin sent last, then gather what the run showed.
    pub async fn after_run(ctx: &RunContext, sessions: &mut Sessions) -> Observations {
        // Observations cover everything the plugin did, so the last spawn
        // ends first (a message sent just before is still counted).
        sessions.close_shared().await;
        let _ = ctx.in_flight.settle(ctx.timeouts.request).await;
        let wire = sessions
            .transcripts()
            .iter()
            .flat_map(|t| t.records())
            .collect();
        Observations {
            manifest: ctx.manifest.clone(),
            request_budget: ctx.timeouts.request,
            hook_budget: ctx.timeouts.hook,
            events: ctx.audit.events(),
            wire,
        }
    }

    /// Observations read back from a stored run.
    pub fn stored(
        manifest: Arc<Manifest>,
        (request_budget, hook_budget): (Duration, Duration),
        events: Vec<AuditRecord>,
        wire: Vec<TranscriptRecord>,
    ) -> Observations {
        Observations {
            manifest,
            request_budget,
            hook_budget,
            events,
            wire,
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

    /// Every wire record of every spawn, spawn after spawn.
    pub fn wire(&self) -> &[TranscriptRecord] {
        &self.wire
    }

    /// How many requests the plugin sent (storage and the like).
    pub fn plugin_requests(&self) -> usize {
        self.wire
            .iter()
            .filter(|r| r.dir == Direction::PluginToHost)
            .filter(|r| r.msg.get("method").is_some() && r.msg.get("id").is_some())
            .count()
    }

    /// Every line the plugin wrote to stderr, spawn after spawn.
    pub fn stderr(&self) -> Vec<&str> {
        self.wire
            .iter()
            .filter(|r| r.dir == Direction::PluginStderr)
            .filter_map(|r| r.msg.as_str())
            .collect()
    }
}
