//! One row of `GET /api/v1/plugins`: a supervised plugin's state, process,
//! restarts, cage, refusal and health ([`PluginStatus`]).

use serde::Serialize;
use serde_json::{json, Value};

use super::consent_gate::Refusal;
use super::managed::Managed;
use kaged_host_core::health::HealthReport;

/// One row of `GET /api/v1/plugins`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PluginStatus {
    /// The manifest name.
    pub name: String,
    /// The manifest version (empty when the manifest cannot be read).
    pub version: String,
    /// The supervisor state (`running`, `crashed`, `failed` ...).
    pub state: String,
    /// The running process's pid.
    pub pid: Option<u32>,
    /// Processes started after the first one (restarts and re-enables).
    pub restarts: u64,
    /// How the last process ended: `{"code", "signal"}`.
    pub last_exit: Option<Value>,
    /// Whether the running process is caged; `None` when none runs.
    pub caged: Option<bool>,
    /// Why the plugin was not started (its manifest asks more than was
    /// consented: the command that re-consents), while that stands.
    pub refusal: Option<Refusal>,
    /// `ok`, `degraded` or `failed`, and why in one line
    /// ([`kaged_host_core::health`]).
    pub health: HealthReport,
}

/// The status row of `m`.
pub(super) fn status_of(m: &Managed) -> PluginStatus {
    let process = m.sup.current();
    PluginStatus {
        name: m.sup.name().to_string(),
        // The running process's own (an upgraded copy restarted since the
        // daemon started reports its new version).
        version: process
            .as_ref()
            .map_or_else(|| m.version.clone(), |s| s.manifest().version.clone()),
        state: m.sup.state().to_string(),
        pid: process.as_ref().and_then(|s| s.pid()),
        restarts: m.sup.spawn_attempts().saturating_sub(1),
        last_exit: m
            .sup
            .last_exit()
            .map(|x| json!({"code": x.code, "signal": x.signal})),
        caged: process.as_ref().map(|s| s.caged()),
        refusal: m.sup.refusal().map(Refusal::from),
        health: m.sup.health(),
    }
}
