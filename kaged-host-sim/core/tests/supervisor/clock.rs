//! The restart policy under a virtual clock: the backoff sequence (1 s,
//! 2 s, 4 s … capped at 60 s) and the `failed` verdict after 5 failures in
//! 10 minutes, with real plugin processes and the spec's full-scale
//! durations, without waiting them out: the supervisor's clock is a
//! [`ManualClock`] the test advances.

use std::time::Duration;

use crate::helpers::{assert_no_generation_left, lifecycle, names, of, wait_state};
use crate::support::host::{fixture, host, LIMIT};
use kaged_host_core::time::clock::{Clock, ManualClock};
use kaged_host_core::{AuditLog, PluginState, Supervisor};

/// A supervisor of a plugin that crashes right after every handshake, at
/// full time scale, on a manual clock.
fn crashing() -> (Supervisor, ManualClock, AuditLog) {
    let (host, audit, _t) = host(1.0);
    let clock = ManualClock::new();
    let sup = Supervisor::with_clock(
        host,
        fixture("supervisor-crash-after-init"),
        Clock::Manual(clock.clone()),
    );
    (sup, clock, audit)
}

/// The next backoff the supervisor begins (panics when none begins within
/// [`LIMIT`] of real time).
async fn next_backoff(clock: &ManualClock) -> Duration {
    clock
        .next_sleep(LIMIT)
        .await
        .expect("the supervisor began a backoff")
}

const fn s(secs: u64) -> Duration {
    Duration::from_secs(secs)
}

#[tokio::test]
async fn the_backoff_doubles_from_1_s_to_the_60_s_cap() {
    let (sup, clock, audit) = crashing();
    sup.start().await.expect("start");
    let mut delays = Vec::new();
    for _ in 0..8 {
        delays.push(next_backoff(&clock).await);
        // Failures 4 minutes apart: at most 3 in any 10-minute window, so
        // the streak grows but never reaches the failed verdict.
        clock.advance(s(240));
    }
    assert_eq!(delays, [s(1), s(2), s(4), s(8), s(16), s(32), s(60), s(60)]);
    assert_eq!(sup.consecutive_failures(), 8);
    assert_ne!(sup.state(), PluginState::Failed);
    sup.stop().await;
    assert_eq!(sup.state(), PluginState::Stopped);
    assert!(of(&lifecycle(&audit), "plugin.failed").is_empty());
    assert_no_generation_left(&audit);
}

#[tokio::test]
async fn five_failures_within_ten_minutes_mark_the_plugin_failed() {
    let (sup, clock, audit) = crashing();
    sup.start().await.expect("start");
    let mut delays = Vec::new();
    for _ in 0..4 {
        let d = next_backoff(&clock).await;
        delays.push(d);
        // Restart exactly when the backoff ends: failures at 0, 1, 3, 7
        // and 15 s of virtual time.
        clock.advance(d);
    }
    assert_eq!(delays, [s(1), s(2), s(4), s(8)]);
    wait_state(&sup, PluginState::Failed).await;
    let ev = lifecycle(&audit);
    assert_eq!(of(&ev, "plugin.failed")[0].get("total_failures"), 5);
    assert_eq!(
        names(&ev[ev.len() - 2..]),
        ["plugin.failed", "plugin.disabled"]
    );
    assert_eq!(sup.spawn_attempts(), 5);
    // No further backoff began: nothing is restarted any more.
    assert_eq!(clock.next_sleep(Duration::from_millis(1)).await, None);
    assert_eq!(assert_no_generation_left(&audit), 5);
}

#[tokio::test]
async fn a_quiet_spell_longer_than_the_window_starts_a_new_streak() {
    let (sup, clock, audit) = crashing();
    sup.start().await.expect("start");
    let mut delays = Vec::new();
    for i in 0..4 {
        let d = next_backoff(&clock).await;
        delays.push(d);
        if i < 3 {
            clock.advance(d);
        }
    }
    // Four failures within 7 s: one more in the window would fail the
    // plugin. Ten minutes and a second after the fourth, the fifth failure
    // starts a new streak and waits 1 s again.
    clock.advance(s(601));
    delays.push(next_backoff(&clock).await);
    assert_eq!(delays, [s(1), s(2), s(4), s(8), s(1)]);
    assert_eq!(sup.consecutive_failures(), 1);
    assert_ne!(sup.state(), PluginState::Failed);
    sup.stop().await;
    assert_no_generation_left(&audit);
}
