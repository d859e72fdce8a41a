//! Wire-protocol rules after the handshake: stdout noise, oversize lines,
//! batches, notification flood (ADDENDUM §8), unknown response ids.

use std::time::Duration;

use crate::support::host::{assert_group_gone, fixture, host, one, EASY, LIMIT};
use kaged_host_core::{CallError, TimeScale, Timeouts};
use serde_json::json;

#[tokio::test]
async fn stdout_noise_is_audited_cut_and_discarded() {
    let (host, audit, _t) = host(EASY);
    let s = host.launch(&fixture("stdout-noise")).await.expect("launch");
    let v = s
        .call("noise.make", None, None)
        .await
        .expect("call survives noise");
    assert_eq!(v, json!({"noisy": true}));
    let noise = audit.of(kaged_host_core::AuditEvent::StdoutNoise);
    // One line at start-up (before initialize: noise, not a message) and
    // one during the call.
    assert_eq!(noise.len(), 2, "{:?}", audit.names());
    assert_eq!(noise[0].get("line"), "starting up (this line is not JSON)");
    let long = noise[1].get("line").as_str().expect("line");
    assert_eq!(long.chars().count(), 200, "truncated to 200 chars");
    assert!(long.starts_with("noise xxx"));
    assert_eq!(noise[1].get("truncated"), true);
    assert_eq!(noise[1].get("length"), 506);
    assert_eq!(noise[0].get("truncated"), false);
    assert!(s.is_running());
    assert!(s.shutdown().await.is_clean());
}

#[tokio::test]
async fn an_oversize_line_kills_the_plugin() {
    let (host, audit, transcript) = host(EASY);
    let s = host
        .launch(&fixture("oversize-line"))
        .await
        .expect("launch");
    let pid = s.pid().expect("pid");
    let e = s.call("big.send", None, None).await.unwrap_err();
    assert!(matches!(e, CallError::Closed { .. }), "{e:?}");
    s.wait_exit(LIMIT).await.expect("exit");
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.method_called",
            "protocol.oversize_message",
            "plugin.killed",
            "plugin.method_returned"
        ]
    );
    let ev = one(&audit, "protocol.oversize_message");
    assert!(ev.get("length").as_u64().expect("length") > 4 * 1024 * 1024);
    assert_eq!(
        one(&audit, "plugin.killed").get("reason"),
        "oversize_message"
    );
    assert_group_gone(pid);
    // The transcript notes the line without storing 5 MiB.
    assert!(transcript.records().iter().any(|r| r
        .msg
        .as_str()
        .is_some_and(|m| m.starts_with("<oversize line"))));
}

#[tokio::test]
async fn a_batch_is_answered_32600_with_id_null_and_audited() {
    let (host, audit, _t) = host(EASY);
    let s = host.launch(&fixture("batch-sender")).await.expect("launch");
    let v = s.call("batch.send", None, None).await.expect("call");
    let answer = &v["host_answer"];
    assert!(answer["id"].is_null());
    assert_eq!(answer["error"]["code"], -32600);
    let ev = one(&audit, "plugin.protocol_violation");
    assert_eq!(ev.get("violation_type"), "batch");
    assert!(s.is_running(), "a batch after the handshake is not fatal");
    assert!(s.shutdown().await.is_clean());
}

#[tokio::test]
async fn a_notification_flood_is_limited_to_100_per_window() {
    // The 250 notifications arrive within one (real) second.
    let (host, audit, _t) = host(EASY);
    let s = host
        .launch(&fixture("notification-flood"))
        .await
        .expect("launch");
    let mut rx = s.notifications();
    s.call("flood.start", None, None).await.expect("call");
    let mut ticks = 0;
    let rate_limited = loop {
        let n = tokio::time::timeout(LIMIT, rx.recv())
            .await
            .expect("in time")
            .expect("note");
        match n.method.as_str() {
            "flood.tick" => ticks += 1,
            "flood.rate_limited" => break n.params,
            other => panic!("unexpected {other}"),
        }
    };
    assert_eq!(ticks, 100);
    // The plugin echoes the host's system.rate_limited back to us.
    assert_eq!(
        rate_limited,
        Some(json!({"limit_per_sec": 100, "dropped": 150}))
    );
    let flood = audit.of(kaged_host_core::AuditEvent::NotificationFlood);
    assert_eq!(flood.len(), 1, "once per window");
    assert_eq!(flood[0].get("limit_per_sec"), 100);
    let notes = audit.of(kaged_host_core::AuditEvent::Notification);
    assert_eq!(notes.len(), 101, "100 ticks + the echo");
    assert!(s.shutdown().await.is_clean());
}

/// ADDENDUM §10: "Rates are not intervals: the notification limit stays
/// 100 per real second at any scale" (the window was scaled with the
/// timeouts: at 0.05, 100 per 50 ms).
#[test]
fn the_notification_limit_is_100_per_real_second_at_any_scale() {
    for scale in [0.05, 0.25, 1.0] {
        let t = Timeouts::defaults(TimeScale::new(scale).expect("scale"));
        assert_eq!(t.notification_window, Duration::from_secs(1), "{scale}");
        assert_eq!(t.notification_limit, 100, "{scale}");
    }
}

#[tokio::test]
async fn answers_to_raw_requests_are_tapped_not_violations() {
    let (host, audit, _t) = host(EASY);
    let s = host.launch(&fixture("good")).await.expect("launch");
    let raw = s.raw();
    let mut inbound = raw.inbound();
    assert!(raw.send_value(&json!({"jsonrpc": "2.0", "id": 999, "method": "ping"})));
    let answer = tokio::time::timeout(LIMIT, inbound.recv())
        .await
        .expect("in time")
        .expect("line");
    assert_eq!(answer["id"], 999);
    assert_eq!(answer["result"], json!({"status": "ok"}));
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned"
        ]
    );
    s.shutdown().await;
}
