//! The notification rate limiter (ADDENDUM §8): a sliding window of
//! accepted notifications; past the limit the excess is dropped and counted
//! in a flood "episode" that lasts one window.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// What to do with one notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Deliver it.
    Accept,
    /// Drop it. `first` is true for the first drop of an episode (audit
    /// `plugin.notification_flood` and schedule `system.rate_limited`);
    /// `rate` is how many arrived in the window, this one included.
    Drop { first: bool, rate: usize },
}

/// Sliding-window counter.
#[derive(Debug)]
pub(crate) struct RateLimiter {
    window: Duration,
    limit: usize,
    accepted: VecDeque<Instant>,
    episode_dropped: Option<u64>,
}

impl RateLimiter {
    pub(crate) fn new(window: Duration, limit: u32) -> RateLimiter {
        RateLimiter {
            window,
            limit: limit as usize,
            accepted: VecDeque::new(),
            episode_dropped: None,
        }
    }

    /// Judge one notification arriving at `now`.
    pub(crate) fn check(&mut self, now: Instant) -> Verdict {
        while let Some(&t) = self.accepted.front() {
            if now.duration_since(t) >= self.window {
                self.accepted.pop_front();
            } else {
                break;
            }
        }
        if self.accepted.len() < self.limit {
            self.accepted.push_back(now);
            return Verdict::Accept;
        }
        let rate = self.accepted.len() + 1;
        match self.episode_dropped.as_mut() {
            Some(n) => {
                *n += 1;
                Verdict::Drop { first: false, rate }
            }
            None => {
                self.episode_dropped = Some(1);
                Verdict::Drop { first: true, rate }
            }
        }
    }

    /// End the current episode, returning how many were dropped in it.
    pub(crate) fn end_episode(&mut self) -> u64 {
        self.episode_dropped.take().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_over_limit_is_one_episode() {
        let mut r = RateLimiter::new(Duration::from_secs(1), 100);
        let t0 = Instant::now();
        let verdicts: Vec<Verdict> = (0..250).map(|_| r.check(t0)).collect();
        assert_eq!(
            verdicts.iter().filter(|v| **v == Verdict::Accept).count(),
            100
        );
        let firsts = verdicts
            .iter()
            .filter(|v| matches!(v, Verdict::Drop { first: true, .. }))
            .count();
        assert_eq!(firsts, 1);
        assert_eq!(r.end_episode(), 150);
        // The window slides: a second later, notifications are accepted again.
        assert_eq!(r.check(t0 + Duration::from_secs(1)), Verdict::Accept);
    }
}
