//! Waiting until a plugin has had its say: a window counted in the
//! plugin's own CPU time, not the clock's, so that a plugin starved on a
//! busy machine is heard as on an idle one. The conformance suite listens
//! this way before `initialize` (to catch a plugin that speaks first); a
//! session script waits this way after `initialized`, so that what a
//! plugin sends on `initialized` (a `CREATE TABLE`) always falls into the
//! handshake's step of the transcript, never into the first call's.
//!
//! The window lasts until the plugin's processes sit idle (neither on a
//! CPU nor waiting for one over [`QUIET_IDLE`]: blocked on input, it has
//! said what it would say) and the host has handled everything they wrote
//! ([`PluginHandle::output_settled`]), or until they used their CPU budget
//! (a twentieth of the initialize timeout, within 50-500 ms: a plugin
//! still computing), and at most the initialize timeout by the clock. A
//! process that cannot be measured gets the budget by the clock.

use std::time::Duration;

use super::handle::PluginHandle;
use super::probe::tree_usage;
use crate::time::Timeouts;

/// The shortest window.
pub const QUIET_MIN: Duration = Duration::from_millis(50);
/// How long the plugin must use no CPU to end the window early (twice the
/// 10 ms clock tick `/proc` counts CPU time in, sampled twice).
pub const QUIET_IDLE: Duration = Duration::from_millis(20);

/// A quiet window's limits (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietWindow {
    /// The plugin's CPU time the window lasts at most.
    pub cpu_budget: Duration,
    /// The clock's time it lasts at most.
    pub cap: Duration,
}

impl QuietWindow {
    /// The window for a plugin with these (scaled) timeouts.
    ///
    /// ```
    /// use kaged_host_core::quiet::QuietWindow;
    /// use kaged_host_core::time::{TimeScale, Timeouts};
    /// use std::time::Duration;
    /// let t = Timeouts::defaults(TimeScale::new(1.0).unwrap()); // initialize: 10 s
    /// assert_eq!(QuietWindow::for_timeouts(&t).cpu_budget, Duration::from_millis(500));
    /// let fast = Timeouts::defaults(TimeScale::new(0.05).unwrap()); // 0.5 s
    /// assert_eq!(QuietWindow::for_timeouts(&fast).cpu_budget, Duration::from_millis(50));
    /// ```
    pub fn for_timeouts(t: &Timeouts) -> QuietWindow {
        let cpu_budget = (t.initialize / 20).clamp(QUIET_MIN, Duration::from_millis(500));
        QuietWindow {
            cpu_budget,
            cap: t.initialize.max(cpu_budget),
        }
    }

    /// Wait until the window ends, or until `stop` says so (checked
    /// between samples: the suite stops when the plugin spoke).
    pub async fn wait(self, session: &PluginHandle, stop: impl Fn() -> bool) {
        let began = tokio::time::Instant::now();
        let cap = began + self.cap;
        tokio::time::sleep(QUIET_MIN.min(self.cpu_budget)).await;
        let pid = session.pid();
        let usage = || pid.and_then(tree_usage);
        let Some(first) = usage() else {
            // Gone, or not measurable: the budget by the clock.
            tokio::time::sleep_until(began + self.cpu_budget).await;
            return;
        };
        let mut idle_samples = 0;
        while tokio::time::Instant::now() < cap && !stop() {
            let before = usage();
            tokio::time::sleep(QUIET_IDLE / 2).await;
            let after = usage();
            let (Some(b), Some(a)) = (before, after) else {
                // Gone: whatever it wrote is on its way; wait till handled.
                while !session.output_settled() && !stop() && tokio::time::Instant::now() < cap {
                    tokio::time::sleep(QUIET_IDLE / 2).await;
                }
                return;
            };
            if a.cpu.saturating_sub(first.cpu) >= self.cpu_budget {
                return;
            }
            // On a CPU or waiting for one (a starved plugin uses no CPU
            // yet has not had its say), or in disk I/O (a starting
            // interpreter reading its modules): not idle.
            if a.busy() == b.busy() && a.active_threads == 0 {
                idle_samples += 1;
            } else {
                idle_samples = 0;
            }
            // Idle, and what it wrote before going idle was handled.
            if idle_samples >= 2 && session.output_settled() {
                return;
            }
        }
    }
}
