//! Operator and daemon actions on a supervised plugin: graceful stop,
//! disable, enable, dropping the supervisor, stopping mid-launch or during
//! a pending restart.

use kaged_host_core::time::REAP_POLL;
use kaged_host_core::{group_alive, PluginState, ShutdownOutcome, SupervisorError};
use serde_json::json;

use crate::helpers::{
    assert_no_generation_left, lifecycle, names, of, pid, staged_flaky, supervise, wait_state,
};
use crate::support::host::{assert_group_gone, fixture, one, LIMIT};

#[tokio::test]
async fn a_graceful_stop_is_final() {
    let (sup, audit) = supervise(&fixture("good"), 0.25);
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Running).await;
    let first = pid(&sup).expect("pid");
    let outcome = sup.stop().await.expect("a process");
    assert!(
        matches!(outcome, ShutdownOutcome::Exited(e) if e.code == Some(0)),
        "{outcome:?}"
    );
    assert_eq!(sup.state(), PluginState::Stopped);
    assert!(sup.current().is_none());
    assert_eq!(sup.spawn_attempts(), 1);
    assert_eq!(
        names(&lifecycle(&audit)),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.exited",
            "plugin.stopped"
        ]
    );
    assert_eq!(one(&audit, "plugin.exited").get("exit_code"), 0);
    assert_group_gone(first);
    assert_eq!(sup.stop().await, None);
    assert_eq!(lifecycle(&audit).len(), 4);
}

#[tokio::test]
async fn enable_after_failed_spawns_afresh() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (dir, counter) = staged_flaky(tmp.path(), 5);
    let (sup, audit) = supervise(&dir, 0.1);
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Failed).await;
    let ev = lifecycle(&audit);
    // Each start is recorded when the process starts, then its crash.
    let mut want = ["plugin.spawned", "plugin.crashed"].repeat(5);
    want.extend(["plugin.failed", "plugin.disabled"]);
    assert_eq!(names(&ev), want);
    let crashes = of(&ev, "plugin.crashed");
    assert_eq!(crashes.len(), 5);
    for (i, crash) in crashes.iter().enumerate() {
        assert_eq!(crash.get("exit_code"), 1);
        let line = format!("start {}: failing on purpose", i + 1);
        assert_eq!(crash.get("last_stderr"), &json!([line]));
    }
    assert_eq!(ev[10].get("total_failures"), 5);
    assert_eq!(sup.consecutive_failures(), 5);
    let mark = lifecycle(&audit).len();
    sup.enable().await.expect("enable");
    wait_state(&sup, PluginState::Running).await;
    assert_eq!(sup.consecutive_failures(), 0);
    assert_eq!(
        names(&lifecycle(&audit)[mark..]),
        ["plugin.enabled", "plugin.spawned", "plugin.initialized"]
    );
    assert_eq!(std::fs::read_to_string(&counter).expect("counter"), "6");
    assert!(matches!(
        sup.enable().await,
        Err(SupervisorError::AlreadyActive { .. })
    ));
    assert!(sup.stop().await.expect("a process").is_clean());
    assert_eq!(assert_no_generation_left(&audit), 6);
}

#[tokio::test]
async fn disable_stops_and_only_enable_restarts() {
    let (sup, audit) = supervise(&fixture("good"), 0.25);
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Running).await;
    assert!(sup
        .disable("operator request")
        .await
        .expect("a process")
        .is_clean());
    assert_eq!(sup.state(), PluginState::Disabled);
    assert_eq!(
        names(&lifecycle(&audit)),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.exited",
            "plugin.stopped",
            "plugin.disabled"
        ]
    );
    assert_eq!(
        one(&audit, "plugin.disabled").get("reason"),
        "operator request"
    );
    assert!(matches!(
        sup.start().await,
        Err(SupervisorError::NotEnabled { .. })
    ));
    assert_eq!(sup.disable("again").await, None);
    sup.enable().await.expect("enable");
    wait_state(&sup, PluginState::Running).await;
    assert_eq!(
        names(&lifecycle(&audit)[5..]),
        ["plugin.enabled", "plugin.spawned", "plugin.initialized"]
    );
    sup.stop().await.expect("a process");
    assert_eq!(assert_no_generation_left(&audit), 2);
}

#[tokio::test]
async fn dropping_the_supervisor_kills_the_plugin() {
    let (sup, audit) = supervise(&fixture("child-spawning"), 0.25);
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Running).await;
    let first = pid(&sup).expect("pid");
    drop(sup);
    assert_eq!(
        names(&lifecycle(&audit)),
        ["plugin.spawned", "plugin.initialized", "plugin.killed"]
    );
    assert_eq!(
        one(&audit, "plugin.killed").get("reason"),
        "supervisor dropped"
    );
    // SIGKILL went out synchronously; the exit monitor reaps in the background.
    let gone = tokio::time::timeout(LIMIT, async {
        while group_alive(first) {
            tokio::time::sleep(REAP_POLL).await;
        }
    })
    .await;
    assert!(gone.is_ok(), "process group {first} survived the drop");
    assert_eq!(
        lifecycle(&audit).len(),
        3,
        "{:?}",
        names(&lifecycle(&audit))
    );
}

#[tokio::test]
async fn stop_cancels_a_pending_restart() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (dir, counter) = staged_flaky(tmp.path(), 100);
    // Backoff 0.25 s, 0.5 s, ...: the restart is pending for a while.
    let (sup, audit) = supervise(&dir, 0.25);
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Crashed).await;
    assert_eq!(sup.stop().await, None);
    assert_eq!(sup.state(), PluginState::Stopped);
    assert_eq!(sup.consecutive_failures(), 0);
    let starts = sup.spawn_attempts();
    assert!(starts >= 1);
    let ev = lifecycle(&audit);
    let want = ["plugin.spawned", "plugin.crashed"].repeat(starts as usize);
    assert_eq!(names(&ev), want);
    assert_eq!(
        std::fs::read_to_string(&counter).expect("counter"),
        starts.to_string()
    );
    assert_eq!(assert_no_generation_left(&audit) as u64, starts);
}

#[tokio::test]
async fn stop_during_the_handshake_kills_the_half_started_process() {
    // `silent` never answers initialize (2.5 s at this scale).
    let (sup, audit) = supervise(&fixture("silent"), 0.25);
    sup.start().await.expect("start");
    assert_eq!(sup.state(), PluginState::Spawning);
    // Wait until the process exists (recorded when it starts, caged or not).
    tokio::time::timeout(LIMIT, async {
        while names(&lifecycle(&audit)).is_empty() {
            tokio::time::sleep(REAP_POLL).await;
        }
    })
    .await
    .expect("the driver runs");
    assert_eq!(sup.stop().await, None);
    assert_eq!(sup.state(), PluginState::Stopped);
    assert_eq!(
        names(&lifecycle(&audit)),
        ["plugin.spawned", "plugin.killed"]
    );
    let killed = one(&audit, "plugin.killed");
    assert_eq!(killed.get("reason"), "session dropped");
    let first = killed.get("pid").as_u64().expect("pid") as u32;
    let gone = tokio::time::timeout(LIMIT, async {
        while group_alive(first) {
            tokio::time::sleep(REAP_POLL).await;
        }
    })
    .await;
    assert!(gone.is_ok(), "process group {first} survived the stop");
}

#[tokio::test]
async fn the_config_follows_initialized_before_any_call_and_is_empty_when_unset() {
    // ADDENDUM §12 and §15: config.update right after `initialized`, before
    // any other call, `{}` when no config was set.
    let (host, _audit, transcript) = crate::support::host::host_scaled(0.25);
    let sup = kaged_host_core::Supervisor::new(host, fixture("good"));
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Running).await;
    let session = sup.current().expect("running");
    session.call("status.get", None, None).await.expect("call");
    let sent: Vec<serde_json::Value> = transcript
        .records()
        .into_iter()
        .filter(|r| r.dir == kaged_host_core::Direction::HostToPlugin)
        .map(|r| r.msg)
        .collect();
    let methods: Vec<&str> = sent.iter().filter_map(|m| m["method"].as_str()).collect();
    assert_eq!(
        methods[..4],
        ["initialize", "initialized", "config.update", "status.get"],
        "{methods:?}"
    );
    assert_eq!(sent[2]["params"], json!({}));
    drop(session);
    assert!(sup.stop().await.is_some());
}
