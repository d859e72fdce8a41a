//! [`StartGate`]: a check the supervisor runs before every launch of its
//! plugin, the first start and every restart alike (the daemon's consent
//! check, ADDENDUM §16: "Consent is checked at every start"). A plugin the
//! gate refuses is not spawned: the refusal's record is audited, then
//! `plugin.disabled {reason, detail}`, and the plugin stays `disabled`
//! (never restarted) until [`Supervisor::enable`](super::Supervisor::enable)
//! runs the gate again.

use std::path::Path;

use serde_json::Value;

use crate::observe::audit::AuditEvent;

/// Decides, before each launch, whether the plugin in a directory may
/// start.
pub trait StartGate: Send + Sync + std::fmt::Debug {
    /// `Ok` to launch the plugin in `dir`; why not otherwise.
    fn check(&self, dir: &Path) -> Result<(), Box<StartRefusal>>;
}

/// Why a [`StartGate`] refused a start.
#[derive(Debug, Clone, PartialEq)]
pub struct StartRefusal {
    /// `plugin.disabled`'s reason (`capability_overreach`).
    pub reason: String,
    /// The capabilities at fault (canonical strings).
    pub capabilities: Vec<String>,
    /// The command that lets the plugin start again, when one can.
    pub remedy: Option<String>,
    /// One line for the operator: what is refused and what to do.
    pub message: String,
    /// The record audited before `plugin.disabled`
    /// (`plugin.capability_overreach`), if any.
    pub event: Option<AuditEvent>,
    /// The data of [`event`](Self::event).
    pub data: Value,
}
