//! A supervised plugin's health, as an operator reads it: `ok`,
//! `degraded` or `failed`, with a one-line summary ([`HealthReport`]).
//!
//! - `failed`: the supervisor gave up (five failures in the window, or a
//!   failure no restart fixes);
//! - `degraded`: it runs, or is about to be restarted, but a recent health
//!   ping used more than half its budget or failed, or it restarted within
//!   the failure window (what yaya's doctor calls degraded);
//! - `ok` otherwise (a plugin that is stopped or disabled on purpose is
//!   not unhealthy; its summary says it is not running).
//!
//! The judgement is a pure step ([`assess`]) over the state, the latest
//! pings ([`PingSample`]) and the failures in the window.

use std::time::Duration;

use serde::Serialize;

use super::PluginState;
use crate::plugin::handle::PingSample;

/// The three health levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Health {
    /// Running within its budgets, or not running on purpose.
    Ok,
    /// Running, but slow or restarting.
    Degraded,
    /// The supervisor gave up on it.
    Failed,
}

/// A plugin's health and why, in one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HealthReport {
    /// The level.
    pub status: Health,
    /// Why, in one line.
    pub summary: String,
}

/// The health of a plugin in `state`, whose latest health pings were
/// `pings` and which failed `failures` time(s) within the last `window`.
///
/// ```
/// use std::time::Duration;
/// use kaged_host_core::health::{assess, Health};
/// use kaged_host_core::{PingSample, PluginState};
/// let ms = Duration::from_millis;
/// let fast = PingSample { took: ms(20), budget: ms(5000), ok: true };
/// let slow = PingSample { took: ms(3000), budget: ms(5000), ok: true };
/// let w = Duration::from_secs(600);
/// assert_eq!(assess(PluginState::Running, &[fast], 0, w).status, Health::Ok);
/// let h = assess(PluginState::Running, &[fast, slow], 0, w);
/// assert_eq!(h.status, Health::Degraded);
/// assert_eq!(h.summary, "slow: a health ping took 3000 ms of its 5000 ms budget");
/// assert_eq!(assess(PluginState::Running, &[fast], 2, w).status, Health::Degraded);
/// assert_eq!(assess(PluginState::Failed, &[], 5, w).status, Health::Failed);
/// ```
pub fn assess(
    state: PluginState,
    pings: &[PingSample],
    failures: usize,
    window: Duration,
) -> HealthReport {
    let report = |status, summary: String| HealthReport { status, summary };
    let minutes = window.as_secs().div_ceil(60).max(1);
    match state {
        PluginState::Failed => {
            return report(
                Health::Failed,
                "failed: the supervisor gave up on it (enable it to try again)".into(),
            )
        }
        PluginState::Disabled | PluginState::Stopped => {
            return report(Health::Ok, format!("not running ({})", state.as_str()))
        }
        PluginState::Crashed => {
            return report(
                Health::Degraded,
                format!("restarting after a failure ({failures} in the last {minutes} min)"),
            )
        }
        PluginState::Spawning | PluginState::Running => {}
    }
    let ms = |d: Duration| d.as_millis();
    if let Some(p) = pings.iter().rev().find(|p| !p.ok) {
        return report(
            Health::Degraded,
            format!(
                "a health ping failed (no healthy answer within its {} ms budget)",
                ms(p.budget)
            ),
        );
    }
    if let Some(p) = pings.iter().filter(|p| p.slow()).max_by_key(|p| p.took) {
        return report(
            Health::Degraded,
            format!(
                "slow: a health ping took {} ms of its {} ms budget",
                ms(p.took),
                ms(p.budget)
            ),
        );
    }
    if failures > 0 {
        return report(
            Health::Degraded,
            format!("restarted {failures} time(s) in the last {minutes} min"),
        );
    }
    match pings.iter().max_by_key(|p| p.took) {
        Some(p) => report(
            Health::Ok,
            format!(
                "{}; health pings answered in at most {} ms of {} ms",
                state.as_str(),
                ms(p.took),
                ms(p.budget)
            ),
        ),
        None => report(Health::Ok, state.as_str().to_string()),
    }
}
