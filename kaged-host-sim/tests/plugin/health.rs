//! Health checks: three consecutive ping failures kill the plugin, SIGTERM
//! first, SIGKILL after the grace.

use std::sync::Arc;

use crate::support::host::{assert_group_gone, fixture, host, FAST, LIMIT};
use kaged_host_sim::AuditEvent;

#[tokio::test]
async fn three_failed_pings_kill_the_plugin() {
    // health_interval 5 s and ping timeout 5 s, both scaled to 0.25 s.
    let (host, audit, _t) = host(FAST);
    let s = Arc::new(
        host.launch(&fixture("stops-answering-ping"))
            .await
            .expect("launch"),
    );
    let pid = s.pid().expect("pid");
    let _monitor = s.start_health_checks();
    s.wait_exit(LIMIT).await.expect("killed");
    let fails = audit.of(AuditEvent::HealthFail);
    let counts: Vec<u64> = fails
        .iter()
        .filter_map(|r| r.get("consecutive_failures").as_u64())
        .collect();
    assert_eq!(counts, [1, 2, 3]);
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.health_fail",
            "plugin.health_fail",
            "plugin.health_fail",
            "plugin.killed"
        ]
    );
    let killed = audit.of(AuditEvent::Killed);
    assert_eq!(killed[0].get("reason"), "health_check_failed");
    // SIGTERM first (the spec's "SIGTERM → SIGKILL"): the fixture keeps
    // Python's default SIGTERM action, so it dies of signal 15. The exit
    // status is fixed when SIGTERM is sent, whatever the machine's speed.
    assert_eq!(s.exit_info().and_then(|e| e.signal), Some(15));
    assert_eq!(killed[0].get("via"), "sigterm");
    assert_group_gone(pid);
}

#[tokio::test]
async fn a_plugin_ignoring_sigterm_is_sigkilled_after_the_grace() {
    let (host, audit, _t) = host(FAST);
    let s = Arc::new(
        host.launch(&fixture("stops-answering-ping-ignores-sigterm"))
            .await
            .expect("launch"),
    );
    let pid = s.pid().expect("pid");
    let _monitor = s.start_health_checks();
    s.wait_exit(LIMIT).await.expect("killed");
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.health_fail",
            "plugin.health_fail",
            "plugin.health_fail",
            "plugin.killed"
        ]
    );
    let killed = audit.of(AuditEvent::Killed);
    assert_eq!(killed[0].get("reason"), "health_check_failed");
    assert_eq!(killed[0].get("via"), "sigkill");
    assert_eq!(s.exit_info().and_then(|e| e.signal), Some(9));
    assert_group_gone(pid);
}

#[tokio::test]
async fn a_healthy_plugin_passes_its_checks() {
    // good declares health_interval_sec: 5, i.e. 0.25 s at this scale.
    let (host, audit, _t) = host(FAST);
    let s = Arc::new(host.launch(&fixture("good")).await.expect("launch"));
    let mut inbound = s.raw().inbound();
    let monitor = s.start_health_checks();
    // Wait for three ping answers to pass by on the wire.
    let mut answers = 0;
    while answers < 3 {
        let line = tokio::time::timeout(LIMIT, inbound.recv())
            .await
            .expect("pings keep coming")
            .expect("line");
        if line["result"] == serde_json::json!({"status": "ok"}) {
            answers += 1;
        }
    }
    drop(monitor);
    assert!(s.is_running());
    assert!(s.shutdown().await.is_clean());
    assert!(audit.of(AuditEvent::HealthFail).is_empty());
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.exited",
            "plugin.stopped"
        ]
    );
}
