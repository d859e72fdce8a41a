//! The supervisor: restart with backoff, consecutive-failure limit,
//! health-check and request-timeout kills, no restart for what a restart
//! cannot fix; operator actions (stop, disable, enable, drop) are in
//! `operator.rs`. Real subprocesses at small time scales; waits
//! are on the state watch, bounded by a guard; every test checks that no
//! process of any generation is left.

use crate::helpers::{
    assert_no_generation_left, lifecycle, names, of, pid, staged_flaky, supervise, wait_restarted,
    wait_state, wait_until,
};
use crate::support::host::{fixture, one};
use kaged_host_core::{PluginState, SupervisorError};
use serde_json::json;

#[tokio::test]
async fn a_killed_plugin_is_restarted() {
    let (sup, audit) = supervise(&fixture("good"), 0.25);
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Running).await;
    let first = pid(&sup).expect("pid");
    let pid1 = rustix::process::Pid::from_raw(first as i32).expect("pid");
    rustix::process::kill_process(pid1, rustix::process::Signal::KILL).expect("SIGKILL");
    let second = wait_restarted(&sup, first).await;
    let ev = lifecycle(&audit);
    assert_eq!(
        names(&ev),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.crashed",
            "plugin.spawned",
            "plugin.initialized"
        ]
    );
    assert_eq!(ev[2].get("pid"), first);
    assert_eq!(ev[2].get("signal"), 9);
    assert_eq!(ev[3].get("pid"), second);
    // A successful handshake does not end the streak of failures.
    assert_eq!(sup.consecutive_failures(), 1);
    assert_eq!(sup.spawn_attempts(), 2);
    assert!(sup.stop().await.expect("a process").is_clean());
    assert_eq!(sup.state(), PluginState::Stopped);
    assert_eq!(
        names(&lifecycle(&audit)[5..]),
        ["plugin.exited", "plugin.stopped"]
    );
    assert_eq!(assert_no_generation_left(&audit), 2);
}

#[tokio::test]
async fn five_consecutive_failures_mark_the_plugin_failed() {
    let (sup, audit) = supervise(&fixture("supervisor-crash-after-init"), 0.1);
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Failed).await;
    let ev = lifecycle(&audit);
    let mut want = Vec::new();
    for _ in 0..5 {
        want.extend(["plugin.spawned", "plugin.initialized", "plugin.crashed"]);
    }
    want.extend(["plugin.failed", "plugin.disabled"]);
    assert_eq!(names(&ev), want);
    for crash in of(&ev, "plugin.crashed") {
        assert_eq!(crash.get("exit_code"), 3);
        assert_eq!(
            crash.get("last_stderr"),
            &json!(["fatal: crashing on purpose"])
        );
    }
    assert_eq!(of(&ev, "plugin.failed")[0].get("total_failures"), 5);
    assert_eq!(
        of(&ev, "plugin.disabled")[0].get("reason"),
        "consecutive_failures"
    );
    // No further spawn: nothing runs, and only the operator can start it.
    assert_eq!(sup.spawn_attempts(), 5);
    assert!(sup.current().is_none());
    assert!(matches!(
        sup.start().await,
        Err(SupervisorError::NotEnabled {
            state: PluginState::Failed,
            ..
        })
    ));
    assert_eq!(sup.stop().await, None);
    assert_eq!(sup.state(), PluginState::Failed);
    assert_eq!(lifecycle(&audit).len(), want.len());
    assert_eq!(assert_no_generation_left(&audit), 5);
}

#[tokio::test]
async fn failed_health_checks_kill_and_restart() {
    // health interval and ping timeout 5 s, both 0.25 s at this scale.
    let (sup, audit) = supervise(&fixture("stops-answering-ping"), 0.05);
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Running).await;
    let first = pid(&sup).expect("pid");
    wait_restarted(&sup, first).await;
    let ev = lifecycle(&audit);
    assert_eq!(
        names(&ev[..8]),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.health_fail",
            "plugin.health_fail",
            "plugin.health_fail",
            "plugin.killed",
            "plugin.spawned",
            "plugin.initialized"
        ]
    );
    assert_eq!(ev[5].get("reason"), "health_check_failed");
    assert_eq!(ev[5].get("pid"), first);
    assert!(sup.stop().await.expect("a process").is_clean());
    // The new process may have failed a ping before the stop; nothing else.
    let rest: Vec<&str> = names(&lifecycle(&audit)[8..])
        .into_iter()
        .filter(|n| *n != "plugin.health_fail")
        .collect();
    assert_eq!(rest, ["plugin.exited", "plugin.stopped"]);
    assert_eq!(assert_no_generation_left(&audit), 2);
}

#[tokio::test]
async fn a_request_timeout_kills_and_restarts() {
    // request timeout 30 s, 1.5 s at this scale.
    let (sup, audit) = supervise(&fixture("never-answers-a-method"), 0.05);
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Running).await;
    let s = sup.current().expect("session");
    let first = s.pid().expect("pid");
    let err = s
        .call("hang.forever", None, None)
        .await
        .expect_err("times out");
    assert_eq!(err.code(), -32603);
    drop(s);
    wait_restarted(&sup, first).await;
    let ev = lifecycle(&audit);
    assert_eq!(
        names(&ev),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.killed",
            "plugin.spawned",
            "plugin.initialized"
        ]
    );
    assert_eq!(ev[4].get("reason"), "request_timeout");
    sup.stop().await.expect("a process");
    assert_eq!(sup.state(), PluginState::Stopped);
    assert_eq!(assert_no_generation_left(&audit), 2);
}

#[tokio::test]
async fn capability_overreach_fails_at_once() {
    let (sup, audit) = supervise(&fixture("capability-overreach"), 0.25);
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Failed).await;
    let ev = lifecycle(&audit);
    assert_eq!(
        names(&ev),
        [
            "plugin.spawned",
            "plugin.capability_overreach",
            "plugin.killed",
            "plugin.failed",
            "plugin.disabled"
        ]
    );
    assert_eq!(ev[2].get("reason"), "capability_overreach");
    assert_eq!(ev[3].get("total_failures"), 1);
    assert_eq!(ev[4].get("reason"), "capability_overreach");
    assert_eq!(sup.spawn_attempts(), 1);
    assert!(sup.current().is_none());
    assert_eq!(assert_no_generation_left(&audit), 1);
}

#[tokio::test]
async fn identity_mismatches_are_not_restarted() {
    for (dir, event) in [
        ("name-mismatch", "plugin.name_mismatch"),
        ("version-mismatch", "initialize.version_mismatch"),
        ("api-mismatch", "plugin.api_mismatch"),
    ] {
        let (sup, audit) = supervise(&fixture(dir), 0.25);
        sup.start().await.expect("start");
        wait_state(&sup, PluginState::Failed).await;
        assert_eq!(
            names(&lifecycle(&audit)),
            [
                "plugin.spawned",
                event,
                "plugin.killed",
                "plugin.failed",
                "plugin.disabled"
            ],
            "{dir}"
        );
        assert_eq!(sup.spawn_attempts(), 1, "{dir}");
        assert_no_generation_left(&audit);
    }
}

#[tokio::test]
async fn a_flaky_start_recovers_and_keeps_its_count() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (dir, _counter) = staged_flaky(tmp.path(), 2);
    let (sup, audit) = supervise(&dir, 0.1);
    sup.start().await.expect("start");
    wait_until(&sup, |s| {
        s == PluginState::Running || s == PluginState::Failed
    })
    .await;
    assert_eq!(sup.state(), PluginState::Running);
    assert_eq!(
        names(&lifecycle(&audit)),
        [
            "plugin.spawned",
            "plugin.crashed",
            "plugin.spawned",
            "plugin.crashed",
            "plugin.spawned",
            "plugin.initialized"
        ]
    );
    assert_eq!(sup.consecutive_failures(), 2);
    assert_eq!(sup.spawn_attempts(), 3);
    sup.stop().await.expect("a process");
    assert_eq!(assert_no_generation_left(&audit), 3);
}

#[tokio::test]
async fn an_invalid_manifest_leaves_the_plugin_disabled() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("kaged-plugin.yaml"), "name: [not a name\n").expect("write");
    let (sup, audit) = supervise(tmp.path(), 0.25);
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Disabled).await;
    assert_eq!(names(&lifecycle(&audit)), ["plugin.disabled"]);
    assert_eq!(
        one(&audit, "plugin.disabled").get("reason"),
        "invalid manifest"
    );
    assert_eq!(sup.spawn_attempts(), 1);
    assert!(sup.current().is_none());
}

#[tokio::test]
async fn a_clean_exit_without_shutdown_is_restarted() {
    // Exit code 0, but no shutdown notification was sent: a crash.
    let (sup, audit) = supervise(&fixture("good"), 0.25);
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Running).await;
    let s = sup.current().expect("session");
    let first = s.pid().expect("pid");
    assert!(s.close_stdin());
    drop(s);
    wait_restarted(&sup, first).await;
    let ev = lifecycle(&audit);
    assert_eq!(
        names(&ev),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.crashed",
            "plugin.spawned",
            "plugin.initialized"
        ]
    );
    assert_eq!(ev[2].get("exit_code"), 0);
    assert!(sup.stop().await.expect("a process").is_clean());
    assert_eq!(assert_no_generation_left(&audit), 2);
}

#[tokio::test]
async fn a_spawn_failure_is_not_restarted() {
    let (sup, audit) = supervise(&fixture("missing-command"), 0.25);
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Failed).await;
    let ev = lifecycle(&audit);
    assert_eq!(names(&ev), ["plugin.failed", "plugin.disabled"]);
    assert_eq!(ev[0].get("reason"), "spawn failed");
    assert_eq!(ev[1].get("reason"), "spawn_failed");
    assert_eq!(sup.spawn_attempts(), 1);
}
