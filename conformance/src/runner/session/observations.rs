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

/// The waits a run's answers are judged against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budgets {
    /// The request timeout.
    pub request: Duration,
    /// The first `config.update`'s timeout.
    pub first_config: Duration,
    /// The hook timeout.
    pub hook: Duration,
}

/// The whole run, seen from its end.
pub(crate) struct Observations {
    /// The plugin's manifest.
    pub manifest: Arc<Manifest>,
    /// The run's budgets.
    pub budgets: Budgets,
    events: Vec<AuditRecord>,
    wire: Vec<TranscriptRecord>,
}

impl Observations {
    /// What the run showed: every audit event of the run (the primary
    /// spawn's, then each lane's, in lane order) and the records of every
    /// transcript, in the same order.
    pub fn gathered(
        ctx: &RunContext,
        events: Vec<AuditRecord>,
        wire: Vec<TranscriptRecord>,
    ) -> Observations {
        Observations {
            manifest: ctx.manifest.clone(),
            budgets: Budgets {
                request: ctx.timeouts.request,
                first_config: ctx.timeouts.first_config,
                hook: ctx.timeouts.hook,
            },
            events,
            wire,
        }
    }

    /// Every audit event of the run.
    pub fn events(&self) -> &[AuditRecord] {
        &self.events
    }

    /// Observations read back from a stored run.
    pub fn stored(
        manifest: Arc<Manifest>,
        budgets: Budgets,
        events: Vec<AuditRecord>,
        wire: Vec<TranscriptRecord>,
    ) -> Observations {
        Observations {
            manifest,
            budgets,
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
