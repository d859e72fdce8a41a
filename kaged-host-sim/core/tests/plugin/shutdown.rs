//! Graceful shutdown, SIGTERM/SIGKILL escalation, process-group clean-up.

use crate::support::host::{
    assert_group_gone, fixture, host, host_with, one, process_exists, EASY, LIMIT, SHORT,
};
use kaged_host_core::{ExitInfo, ShutdownOutcome, Timeouts};
use serde_json::json;

/// The spec's own times (shutdown_timeout_sec 1 s, then a 2 s SIGTERM
/// grace): the grace is the one window this stage depends on, and 2 s is
/// ample for a process dying of SIGTERM, however loaded the machine.
const SPEC_TIMES: f64 = 1.0;

#[tokio::test]
async fn ignoring_shutdown_but_not_sigterm_ends_in_the_sigterm_stage() {
    let (host, audit, _t) = host(SPEC_TIMES);
    let s = host
        .launch(&fixture("ignores-shutdown"))
        .await
        .expect("launch");
    let pid = s.pid().expect("pid");
    let terminated = ExitInfo {
        code: None,
        signal: Some(15),
    };
    assert_eq!(s.shutdown().await, ShutdownOutcome::Terminated(terminated));
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.killed"
        ]
    );
    // Not the clean stop: the host had to signal it (ADDENDUM §16).
    let killed = one(&audit, "plugin.killed");
    assert_eq!(killed.get("reason"), "shutdown_timeout");
    assert_eq!(killed.get("via"), "sigterm");
    assert_eq!(killed.get("exit_code"), &json!(null));
    assert_eq!(killed.get("exit_signal"), 15);
    assert_group_gone(pid);
}

#[tokio::test]
async fn ignoring_shutdown_and_sigterm_ends_in_sigkill() {
    // Both stages of the ladder are waited out; the start keeps its budget.
    let (host, audit, _t) = host_with(|t| Timeouts {
        shutdown: SHORT,
        sigterm_grace: SHORT,
        ..t
    });
    let s = host
        .launch(&fixture("ignores-shutdown-and-sigterm"))
        .await
        .expect("launch");
    let pid = s.pid().expect("pid");
    assert_eq!(s.shutdown().await, ShutdownOutcome::Killed);
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.killed"
        ]
    );
    let killed = one(&audit, "plugin.killed");
    assert_eq!(killed.get("reason"), "shutdown_timeout");
    assert_eq!(killed.get("via"), "sigkill");
    assert_group_gone(pid);
}

#[tokio::test]
async fn the_group_kill_leaves_no_grandchild_behind() {
    let (host, audit, _t) = host(EASY);
    let s = host
        .launch(&fixture("child-spawning"))
        .await
        .expect("launch");
    let pid = s.pid().expect("pid");
    let v = s.call("child.pid", None, None).await.expect("child.pid");
    let grandchild = v["pid"].as_u64().expect("pid") as u32;
    // A caged plugin reports the pid its cage gives the child.
    let grandchild = match s.caged() {
        true => kaged_host_core::probe::outer_pid(pid, grandchild).expect("the child in the cage"),
        false => grandchild,
    };
    assert!(process_exists(grandchild));
    assert!(s.shutdown().await.is_clean());
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.exited",
            "plugin.stopped"
        ]
    );
    assert_group_gone(pid);
    assert!(!process_exists(grandchild), "the sleep grandchild survived");
}

#[tokio::test]
async fn dropping_a_session_kills_its_group() {
    let (host, audit, _t) = host(EASY);
    let s = host
        .launch(&fixture("child-spawning"))
        .await
        .expect("launch");
    let pid = s.pid().expect("pid");
    drop(s);
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.killed"
        ]
    );
    assert_eq!(
        one(&audit, "plugin.killed").get("reason"),
        "session dropped"
    );
    // SIGKILL was sent synchronously; the session's exit monitor reaps the
    // leader and (as subreaper) the grandchild in the background.
    let gone = tokio::time::timeout(LIMIT, async {
        while kaged_host_core::group_alive(pid) {
            tokio::time::sleep(kaged_host_core::time::REAP_POLL).await;
        }
    })
    .await;
    assert!(gone.is_ok(), "process group {pid} survived the drop");
    assert_group_gone(pid);
}

#[tokio::test]
async fn shutdown_twice_is_harmless() {
    let (host, audit, _t) = host(EASY);
    let s = host.launch(&fixture("good")).await.expect("launch");
    assert!(s.shutdown().await.is_clean());
    assert_eq!(s.shutdown().await, ShutdownOutcome::AlreadyEnded);
    assert_eq!(audit.of(kaged_host_core::AuditEvent::Stopped).len(), 1);
}
