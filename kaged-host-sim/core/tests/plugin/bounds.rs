//! Every memory bound of the host (`kaged_host_core::bounds`), hit by a
//! plugin: an endless stdout line is killed at the line limit with or
//! without a call pending, stderr lines are cut or dropped, a request storm
//! is answered -32005 past the in-flight bound, a plugin that never reads
//! its stdin is killed at the backlog bound, and a slow audit subscriber
//! misses the oldest records. Transcript memory: `observe::transcript`'s
//! unit test.

use std::sync::Arc;
use std::time::Instant;

use crate::support::host::{assert_group_gone, fixture, host, one, EASY, LIMIT};
use kaged_host_core::bounds::{
    FANOUT_QUEUE, MAX_LINE_BYTES, MAX_PLUGIN_REQUESTS_IN_FLIGHT, MAX_STDIN_BACKLOG_BYTES,
    STDERR_LINE_KEEP,
};
use kaged_host_core::{
    AuditEvent, AuditLog, CallError, HostSim, PluginRequestHandler, RequestContext,
};
use kaged_plugin_protocol::{Request, RpcError};
use serde_json::{json, Value};

/// The `length` of `protocol.oversize_message`: what was read when the
/// line passed the limit, far short of the 64 MiB the plugin writes.
fn caught_at_the_limit(audit: &AuditLog) {
    let ev = one(audit, "protocol.oversize_message");
    let len = ev.get("length").as_u64().expect("length") as usize;
    assert!(len > MAX_LINE_BYTES, "{len}");
    assert!(
        len < 2 * MAX_LINE_BYTES,
        "read {len} bytes: not caught at the limit"
    );
    assert_eq!(ev.get("limit"), MAX_LINE_BYTES);
    assert_eq!(
        one(audit, "plugin.killed").get("reason"),
        "oversize_message"
    );
}

#[tokio::test]
async fn an_endless_line_with_no_call_pending_is_killed_at_the_limit() {
    // At every scale: nothing here waits on a timeout.
    for scale in [1.0, 0.05] {
        let (host, audit, _t) = host(scale);
        let s = host
            .launch_with(&fixture("endless-line"), &kaged_host_core::FirstConfig::Off)
            .await
            .expect("launch");
        let pid = s.pid().expect("pid");
        s.wait_exit(LIMIT)
            .await
            .expect("killed, not left streaming");
        caught_at_the_limit(&audit);
        assert_group_gone(pid);
    }
}

#[tokio::test]
async fn an_endless_line_answering_a_call_is_killed_at_the_limit() {
    let (host, audit, _t) = host(EASY);
    let s = host
        .launch(&fixture("endless-line-on-call"))
        .await
        .expect("launch");
    let pid = s.pid().expect("pid");
    let e = s.call("endless.start", None, None).await.unwrap_err();
    assert!(matches!(e, CallError::Closed { .. }), "{e:?}");
    s.wait_exit(LIMIT).await.expect("exit");
    caught_at_the_limit(&audit);
    assert_group_gone(pid);
}

#[tokio::test]
async fn stderr_lines_are_cut_and_a_line_past_the_limit_is_dropped() {
    let (host, _audit, transcript) = host(EASY);
    let s = host
        .launch(&fixture("stderr-bounds"))
        .await
        .expect("launch");
    s.call("stderr.spam", None, None).await.expect("call");
    let stderr = || -> Vec<String> {
        transcript
            .records()
            .into_iter()
            .filter(|r| r.dir == kaged_host_core::Direction::PluginStderr)
            .filter_map(|r| r.msg.as_str().map(str::to_string))
            .collect()
    };
    let deadline = Instant::now() + LIMIT;
    while !stderr().iter().any(|l| l == "done") {
        assert!(
            Instant::now() < deadline,
            "stderr never read: {:?}",
            stderr().len()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let lines = stderr();
    let cut = lines
        .iter()
        .find(|l| l.starts_with('s'))
        .expect("the 10 KiB line");
    assert!(
        cut.ends_with("… (10240 bytes)"),
        "{}",
        &cut[cut.len() - 40..]
    );
    assert_eq!(
        cut.chars().take_while(|c| *c == 's').count(),
        STDERR_LINE_KEEP
    );
    let dropped = lines
        .iter()
        .find(|l| l.starts_with("<stderr line"))
        .expect("the 5 MiB line");
    assert!(
        dropped.contains(&format!("passing {MAX_LINE_BYTES} bytes")),
        "{dropped}"
    );
    assert!(s.is_running(), "stderr bounds never kill");
    assert!(s.shutdown().await.is_clean());
}

/// A handler that never answers: every request stays in flight.
struct Holding;

impl PluginRequestHandler for Holding {
    fn handle(
        &self,
        _ctx: RequestContext,
        _request: Request,
    ) -> futures_util::future::BoxFuture<'static, Result<Value, RpcError>> {
        Box::pin(std::future::pending())
    }
}

#[tokio::test]
async fn a_request_storm_is_answered_resource_busy_past_the_in_flight_bound() {
    let (base, audit, _t) = host(EASY);
    let host = HostSim::new(base.config().clone().with_storage(Arc::new(Holding)));
    let s = host
        .launch(&fixture("request-storm"))
        .await
        .expect("launch");
    let n = MAX_PLUGIN_REQUESTS_IN_FLIGHT + 40;
    let v = s
        .call("storm.run", Some(json!({"n": n, "answered": 40})), None)
        .await
        .expect("the storm's answers");
    let codes = v["codes"].as_array().expect("codes");
    assert_eq!(codes.len(), 40);
    assert!(codes.iter().all(|c| c == -32005), "{codes:?}");
    let flood = audit.of(AuditEvent::RequestFlood);
    assert_eq!(flood.len(), 1, "audited once, not per request");
    assert_eq!(flood[0].get("limit"), MAX_PLUGIN_REQUESTS_IN_FLIGHT);
    assert!(s.is_running());
    let pid = s.pid().expect("pid");
    s.kill("test over").await;
    assert_group_gone(pid);
}

#[tokio::test]
async fn a_plugin_that_never_reads_its_stdin_is_killed_at_the_backlog_bound() {
    let (host, audit, _t) = host(EASY);
    let s = Arc::new(
        host.launch_with(
            &fixture("stdin-ignored"),
            &kaged_host_core::FirstConfig::Off,
        )
        .await
        .expect("launch"),
    );
    let pid = s.pid().expect("pid");
    // 1 MiB calls, never read: the pipe takes 64 KiB, the backlog the rest.
    let big = "x".repeat(1024 * 1024);
    let calls = MAX_STDIN_BACKLOG_BYTES / big.len() + 2;
    let mut tasks = Vec::new();
    for _ in 0..calls {
        let (s, big) = (s.clone(), big.clone());
        tasks.push(tokio::spawn(async move {
            s.call("ignored.eat", Some(json!({"data": big})), None)
                .await
        }));
    }
    s.wait_exit(LIMIT).await.expect("killed");
    let v = one(&audit, "plugin.protocol_violation");
    assert_eq!(v.get("violation_type"), "stdin_backlog");
    assert_eq!(one(&audit, "plugin.killed").get("reason"), "stdin_backlog");
    for t in tasks {
        assert!(t.await.expect("task").is_err(), "no call can succeed");
    }
    assert_group_gone(pid);
}

#[tokio::test]
async fn a_slow_audit_subscriber_misses_the_oldest_and_never_grows_the_host() {
    let log = AuditLog::discard();
    let mut rx = log.subscribe();
    let extra = 10;
    for i in 0..FANOUT_QUEUE + extra {
        log.emit(AuditEvent::Notification, "p", json!({"i": i}));
    }
    match rx.recv().await {
        Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => assert_eq!(n as usize, extra),
        other => panic!("expected a lag, got {other:?}"),
    }
    let first = rx.recv().await.expect("the oldest kept");
    assert_eq!(first.get("i"), extra);
}
