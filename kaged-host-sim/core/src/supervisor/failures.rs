//! Counting consecutive failures (Restart policy steps 3 and 4).
//!
//! A failure is *consecutive* with the previous one when it comes at most
//! one failure window (10 minutes, scaled) after it; a longer quiet spell
//! starts a new streak. A successful handshake does not end a streak (a
//! plugin that crashes a second after every handshake must still end up
//! `failed`). The plugin is marked failed when the streak holds
//! `max_failures` failures within one window; the restart delay is indexed
//! by the streak's length (1 s, 2 s, 4 s ... capped at 60 s, scaled).

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

use crate::time::RestartPolicy;

/// What to do after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Restart after this delay.
    Restart(Duration),
    /// Give up: mark the plugin failed; `total` failures in the streak.
    GiveUp {
        /// Failures in the streak, this one included.
        total: u32,
    },
}

/// The current streak of consecutive failures.
#[derive(Debug, Default)]
pub(crate) struct FailureHistory {
    /// Failures in the streak (not capped).
    streak: u32,
    /// When the streak's failures of the last window happened.
    recent: VecDeque<Instant>,
}

impl FailureHistory {
    /// Failures in the current streak.
    pub(crate) fn consecutive(&self) -> u32 {
        self.streak
    }

    /// Failures of the streak no older than `window` at `now`.
    pub(crate) fn within(&self, now: Instant, window: std::time::Duration) -> usize {
        self.recent
            .iter()
            .filter(|t| now.saturating_duration_since(**t) <= window)
            .count()
    }

    /// Forget every failure (operator enable, clean stop).
    pub(crate) fn reset(&mut self) {
        self.streak = 0;
        self.recent.clear();
    }

    /// Record a failure at `now` and decide.
    pub(crate) fn record(&mut self, now: Instant, policy: &RestartPolicy) -> Verdict {
        if let Some(last) = self.recent.back() {
            if now.saturating_duration_since(*last) > policy.window {
                self.reset();
            }
        }
        self.streak = self.streak.saturating_add(1);
        self.recent.push_back(now);
        while let Some(first) = self.recent.front() {
            if now.saturating_duration_since(*first) > policy.window {
                self.recent.pop_front();
            } else {
                break;
            }
        }
        if self.recent.len() >= policy.max_failures as usize {
            Verdict::GiveUp { total: self.streak }
        } else {
            Verdict::Restart(policy.backoff(self.streak))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::TimeScale;

    fn policy() -> RestartPolicy {
        RestartPolicy::new(TimeScale::FULL)
    }

    #[test]
    fn five_quick_failures_give_up_with_growing_delays() {
        let p = policy();
        let mut h = FailureHistory::default();
        let t0 = Instant::now();
        let verdicts: Vec<Verdict> = (0..5)
            .map(|i| h.record(t0 + Duration::from_secs(i * 10), &p))
            .collect();
        let s = Duration::from_secs;
        assert_eq!(
            verdicts,
            [
                Verdict::Restart(s(1)),
                Verdict::Restart(s(2)),
                Verdict::Restart(s(4)),
                Verdict::Restart(s(8)),
                Verdict::GiveUp { total: 5 }
            ]
        );
    }

    #[test]
    fn slow_failures_back_off_to_the_cap_but_never_give_up() {
        let p = policy();
        let mut h = FailureHistory::default();
        let t0 = Instant::now();
        let mut last = Verdict::Restart(Duration::ZERO);
        // One failure every 4 minutes: at most 3 in any 10-minute window.
        for i in 0..20 {
            last = h.record(t0 + Duration::from_secs(i * 240), &p);
            assert!(matches!(last, Verdict::Restart(_)), "{i}: {last:?}");
        }
        assert_eq!(last, Verdict::Restart(Duration::from_secs(60)));
        assert_eq!(h.consecutive(), 20);
    }

    #[test]
    fn a_quiet_window_starts_a_new_streak() {
        let p = policy();
        let mut h = FailureHistory::default();
        let t0 = Instant::now();
        for i in 0..4 {
            h.record(t0 + Duration::from_secs(i), &p);
        }
        let later = t0 + Duration::from_secs(3 + 601);
        assert_eq!(
            h.record(later, &p),
            Verdict::Restart(Duration::from_secs(1))
        );
        assert_eq!(h.consecutive(), 1);
        h.reset();
        assert_eq!(h.consecutive(), 0);
    }

    #[test]
    fn the_window_is_scaled() {
        let p = RestartPolicy::new(TimeScale::new(0.01).expect("scale"));
        let mut h = FailureHistory::default();
        let t0 = Instant::now();
        // 7 s apart: beyond the scaled 6 s window, so each starts a streak.
        for i in 0..6 {
            let v = h.record(t0 + Duration::from_secs(i * 7), &p);
            assert_eq!(v, Verdict::Restart(Duration::from_millis(10)));
        }
    }
}
