//! Health checks: three consecutive ping failures kill the plugin.

use std::sync::Arc;

use crate::support::host::{assert_group_gone, fixture, host_with, LIMIT, SHORT};
use kaged_host_sim::{AuditEvent, Timeouts};

#[tokio::test]
async fn three_failed_pings_kill_the_plugin() {
    // Pings every SHORT, each waited out after SHORT; the start keeps its
    // spec budget.
    let (host, audit, _t) = host_with(|t| Timeouts {
        ping: SHORT,
        health_interval: SHORT,
        ..t
    });
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
    assert_group_gone(pid);
}

#[tokio::test]
async fn a_healthy_plugin_passes_its_checks() {
    // Pings every SHORT; each answer keeps the spec's 5 s.
    let (host, audit, _t) = host_with(|t| Timeouts {
        health_interval: SHORT,
        ..t
    });
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
