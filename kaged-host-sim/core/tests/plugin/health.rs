//! Health checks: three consecutive ping failures kill the plugin, SIGTERM
//! first, SIGKILL after the grace.

use std::sync::Arc;

use crate::support::host::{assert_group_gone, fixture, host_with, LIMIT, SHORT};
use kaged_host_core::{AuditEvent, AuditLog, PluginHandle, Timeouts};

#[tokio::test]
async fn three_failed_pings_kill_the_plugin() {
    // Pings every SHORT, each waited out after SHORT; the start keeps its
    // spec budget.
    let (s, audit, pid) = killed_by_health_checks("stops-answering-ping", |t| Timeouts {
        ping: SHORT,
        health_interval: SHORT,
        ..t
    })
    .await;
    let fails = audit.of(AuditEvent::HealthFail);
    let counts: Vec<u64> = fails
        .iter()
        .filter_map(|r| r.get("consecutive_failures").as_u64())
        .collect();
    assert_eq!(counts, [1, 2, 3]);
    assert_health_kill_trail(&audit, 3);
    let killed = audit.of(AuditEvent::Killed);
    // SIGTERM first (the spec's "SIGTERM → SIGKILL"): the fixture keeps
    // Python's default SIGTERM action, so it dies of signal 15. The exit
    // status is fixed when SIGTERM is sent, whatever the machine's speed.
    assert_eq!(s.exit_info().and_then(|e| e.signal), Some(15));
    assert_eq!(killed[0].get("via"), "sigterm");
    assert_group_gone(pid);
}

#[tokio::test]
async fn a_plugin_ignoring_sigterm_is_sigkilled_after_the_grace() {
    // Pings every SHORT, each waited out after SHORT, and the SIGTERM grace
    // waited out after SHORT; the start keeps its spec budget.
    let (s, audit, pid) =
        killed_by_health_checks("stops-answering-ping-ignores-sigterm", |t| Timeouts {
            ping: SHORT,
            health_interval: SHORT,
            sigterm_grace: SHORT,
            ..t
        })
        .await;
    assert_health_kill_trail(&audit, 3);
    let killed = audit.of(AuditEvent::Killed);
    assert_eq!(killed[0].get("via"), "sigkill");
    assert_eq!(s.exit_info().and_then(|e| e.signal), Some(9));
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
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.exited",
            "plugin.stopped"
        ]
    );
}

/// `consecutive_failures` and `error` of every `plugin.health_fail`.
fn failures(audit: &kaged_host_core::AuditLog) -> Vec<(u64, String)> {
    audit
        .of(AuditEvent::HealthFail)
        .iter()
        .map(|r| {
            let n = r.get("consecutive_failures").as_u64().expect("count");
            let error = r.get("error").as_str().expect("error").to_string();
            (n, error)
        })
        .collect()
}

#[tokio::test]
async fn an_error_answer_counts_as_a_failure() {
    // Every ping is answered at once with -32000: no ping timeout is
    // involved (each keeps the spec's 5 s), three intervals of SHORT end the
    // plugin.
    let (_s, audit, pid) = killed_by_health_checks("ping-answers-error", |t| Timeouts {
        health_interval: SHORT,
        ..t
    })
    .await;
    let error =
        "plugin answered \"ping\" with an error: JSON-RPC error -32000: database unreachable";
    assert_eq!(
        failures(&audit),
        [
            (1, error.to_string()),
            (2, error.to_string()),
            (3, error.to_string())
        ]
    );
    assert_health_kill_trail(&audit, 3);
    assert_group_gone(pid);
}

#[tokio::test]
async fn a_healthy_answer_resets_the_counter() {
    // Pings 1 and 2 fail, ping 3 is answered {"status": "ok"}, every later
    // ping fails: the count restarts at 1 after the healthy answer, and the
    // kill comes at the third failure after it (ping 6), not at ping 4.
    // Every answer is immediate, so only the interval is shortened.
    let (_s, audit, pid) =
        killed_by_health_checks("ping-fails-twice-then-recovers", |t| Timeouts {
            health_interval: SHORT,
            ..t
        })
        .await;
    let error = |n: u32| {
        format!(
            "plugin answered \"ping\" with an error: JSON-RPC error -32000: unhealthy (ping {n})"
        )
    };
    assert_eq!(
        failures(&audit),
        [
            (1, error(1)),
            (2, error(2)),
            (1, error(4)),
            (2, error(5)),
            (3, error(6))
        ]
    );
    assert_health_kill_trail(&audit, 5);
    assert_group_gone(pid);
}

/// Launch fixture `name` under `adjust`, start its health checks and wait
/// until they end it: the session, its audit log and its pid.
async fn killed_by_health_checks(
    name: &str,
    adjust: fn(Timeouts) -> Timeouts,
) -> (Arc<PluginHandle>, AuditLog, u32) {
    let (host, audit, _t) = host_with(adjust);
    let s = Arc::new(host.launch(&fixture(name)).await.expect("launch"));
    let pid = s.pid().expect("pid");
    let _monitor = s.start_health_checks();
    s.wait_exit(LIMIT).await.expect("killed");
    (s, audit, pid)
}

/// The audit trail of a plugin killed by its health checks after `fails`
/// failed checks: spawned, initialized, `fails` × health_fail, killed
/// (reason `health_check_failed`).
fn assert_health_kill_trail(audit: &AuditLog, fails: usize) {
    let mut expected = vec![
        "plugin.spawned",
        "plugin.initialized",
        "plugin.method_called",
        "plugin.method_returned",
    ];
    expected.extend(std::iter::repeat_n("plugin.health_fail", fails));
    expected.push("plugin.killed");
    assert_eq!(audit.names(), expected);
    assert_eq!(
        audit.of(AuditEvent::Killed)[0].get("reason"),
        "health_check_failed"
    );
}
