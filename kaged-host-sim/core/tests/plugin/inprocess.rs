//! The in-process `connect` path: a hand-written fake plugin task speaking
//! over `tokio::io::duplex`, using the SDK codec.

use std::path::Path;

use crate::support::host::{host, host_with, one, EASY, LIMIT, SHORT};
use kaged_host_core::audit::Violation;
use kaged_host_core::{
    AuditEvent, AuditLog, AuditRecord, HandshakeError, HostSim, LaunchError, PluginHandle,
    ShutdownOutcome, Timeouts,
};
use kaged_plugin_protocol::codec::{encode_line, Frame, LineReader};
use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::{Response, RpcMessage};
use serde_json::{json, Value};
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

fn manifest() -> Manifest {
    Manifest::from_yaml_str(
        "name: fake\nversion: 2.0.0\nkaged_api: 1\ndescription: in-process fake\n\
         command: [./none]\ncapabilities: []\nmethods: [fake.add, fake.last]\nshutdown_timeout_sec: 2\n",
    )
    .expect("manifest")
}

/// What the fake does besides answering `initialize` and `fake.add`.
#[derive(Clone, Copy, PartialEq)]
enum Quirk {
    None,
    SpeakFirst,
    UnknownAnswerId,
    IgnoreShutdown,
    /// Answers `initialized` with id null, and each call with an id-less
    /// answer besides the real one.
    AnswersNotifications,
    /// Each `fake.add` sends two storage requests, both with id 5.
    BadRequestIds,
}

async fn send(w: &mut WriteHalf<DuplexStream>, v: Value) {
    let line = encode_line(&v).expect("encode");
    // The host may be gone: the fake just stops.
    let _ = w.write_all(&line).await;
}

async fn fake_plugin(r: ReadHalf<DuplexStream>, mut w: WriteHalf<DuplexStream>, quirk: Quirk) {
    if quirk == Quirk::SpeakFirst {
        send(&mut w, json!({"jsonrpc": "2.0", "method": "fake.early"})).await;
    }
    let mut lines = LineReader::new(BufReader::new(r));
    // The last answer the host sent to one of our requests (`fake.last`).
    let mut last_answer = Value::Null;
    while let Ok(Some(Frame::Line(line))) = lines.next_frame().await {
        let Ok(msg) = RpcMessage::from_slice(&line) else {
            continue;
        };
        match msg {
            RpcMessage::Response(r) => {
                last_answer = serde_json::to_value(r).expect("json");
            }
            RpcMessage::Request(req) => {
                let result = match req.method.as_str() {
                    "initialize" => json!({"name": "fake", "version": "2.0.0", "api_version": 1,
                        "methods": ["fake.add", "fake.last"], "notifications": ["fake.added"],
                        "capabilities_used": []}),
                    "fake.add" => {
                        let p = req.params.clone().unwrap_or(Value::Null);
                        let sum = p["a"].as_i64().unwrap_or(0) + p["b"].as_i64().unwrap_or(0);
                        send(
                            &mut w,
                            json!({"jsonrpc": "2.0", "method": "fake.added",
                            "params": {"sum": sum}}),
                        )
                        .await;
                        match quirk {
                            Quirk::UnknownAnswerId => {
                                send(&mut w, json!({"jsonrpc": "2.0", "id": 4242, "result": {}}))
                                    .await;
                            }
                            Quirk::AnswersNotifications => {
                                send(&mut w, json!({"jsonrpc": "2.0", "result": {}})).await;
                            }
                            Quirk::BadRequestIds => {
                                for _ in 0..2 {
                                    let schema = json!({"jsonrpc": "2.0", "id": 5,
                                        "method": "kaged.storage.schema", "params": {}});
                                    send(&mut w, schema).await;
                                }
                            }
                            _ => {}
                        }
                        json!({"sum": sum, "request_id": p["_context"]["request_id"]})
                    }
                    "fake.last" => last_answer.clone(),
                    _ => json!(null),
                };
                let resp = Response::ok(req.id, result);
                send(&mut w, serde_json::to_value(resp).expect("json")).await;
            }
            RpcMessage::Notification(n)
                if n.method == "initialized" && quirk == Quirk::AnswersNotifications =>
            {
                send(
                    &mut w,
                    json!({"jsonrpc": "2.0", "id": null, "result": null}),
                )
                .await;
            }
            RpcMessage::Notification(n)
                if n.method == "shutdown" && quirk != Quirk::IgnoreShutdown =>
            {
                return; // dropping `w` closes our stdout: a clean exit
            }
            _ => {}
        }
    }
}

fn pipes(quirk: Quirk) -> (ReadHalf<DuplexStream>, WriteHalf<DuplexStream>) {
    let (host_side, plugin_side) = tokio::io::duplex(64 * 1024);
    let (hr, hw) = tokio::io::split(host_side);
    let (pr, pw) = tokio::io::split(plugin_side);
    tokio::spawn(fake_plugin(pr, pw, quirk));
    (hr, hw)
}

/// A session with the fake plugin, connected in-process.
async fn connected(host: &HostSim, quirk: Quirk) -> PluginHandle {
    let (r, w) = pipes(quirk);
    host.connect(manifest(), Path::new("/nonexistent/fake"), r, w)
        .await
        .expect("connect")
}

/// The run's `plugin.protocol_violation` records.
fn violations(audit: &AuditLog) -> Vec<AuditRecord> {
    audit.of(AuditEvent::ProtocolViolation)
}

#[tokio::test]
async fn connect_calls_notifies_and_shuts_down() {
    let (host, audit, transcript) = host(EASY);
    let s = connected(&host, Quirk::None).await;
    assert_eq!(s.pid(), None);
    let mut notes = s.notifications();
    let v = s
        .call("fake.add", Some(json!({"a": 2, "b": 3})), None)
        .await
        .expect("call");
    assert_eq!(v["sum"], 5);
    assert!(v["request_id"].is_string(), "a _context was injected: {v}");
    let n = tokio::time::timeout(LIMIT, notes.recv())
        .await
        .expect("in time")
        .expect("note");
    assert_eq!(n.method, "fake.added");
    let outcome = s.shutdown().await;
    assert!(matches!(outcome, ShutdownOutcome::Exited(_)), "{outcome:?}");
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.method_called",
            "plugin.notification",
            "plugin.method_returned",
            "plugin.exited",
            "plugin.stopped"
        ]
    );
    // Host ids start at 1: initialize is 1, the first config.update 2,
    // the call 3.
    let recs = transcript.records();
    assert_eq!(recs[0].msg["id"], 1);
    assert_eq!(recs[0].msg["method"], "initialize");
    assert!(recs
        .iter()
        .any(|r| r.msg["method"] == "config.update" && r.msg["id"] == 2));
    assert!(recs
        .iter()
        .any(|r| r.msg["method"] == "fake.add" && r.msg["id"] == 3));
}

#[tokio::test]
async fn an_in_process_peer_speaking_first_is_cut_off() {
    let (host, audit, _t) = host(EASY);
    let (r, w) = pipes(Quirk::SpeakFirst);
    let e = host
        .connect(manifest(), Path::new("/nonexistent/fake"), r, w)
        .await
        .unwrap_err();
    assert!(
        matches!(
            e,
            LaunchError::Handshake {
                source: HandshakeError::ProtocolViolation { .. },
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.protocol_violation",
            "plugin.killed"
        ]
    );
}

#[tokio::test]
async fn an_unknown_answer_id_is_audited_but_not_fatal() {
    let (host, audit, _t) = host(EASY);
    let s = connected(&host, Quirk::UnknownAnswerId).await;
    s.call("fake.add", Some(json!({"a": 1, "b": 1})), None)
        .await
        .expect("call");
    // The stray answer comes right before the real one, so it was seen.
    let v = one(&audit, "plugin.protocol_violation");
    assert_eq!(v.get("violation_type"), "unknown_response_id");
    assert!(s.is_running());
    s.call("fake.add", Some(json!({"a": 1, "b": 2})), None)
        .await
        .expect("still usable");
    s.shutdown().await;
}

#[tokio::test]
async fn answers_to_notifications_are_audited_but_not_fatal() {
    let (host, audit, _t) = host(EASY);
    let s = connected(&host, Quirk::AnswersNotifications).await;
    s.call("fake.add", Some(json!({"a": 1, "b": 1})), None)
        .await
        .expect("call");
    // Both strays come before the call's answer, so both were seen.
    let kinds: Vec<Value> = violations(&audit)
        .iter()
        .map(|r| r.get("violation_type").clone())
        .collect();
    assert_eq!(
        kinds,
        [Violation::AnswerToNotification.as_str(); 2],
        "{:?}",
        audit.names()
    );
    assert!(s.is_running());
    s.shutdown().await;
}

#[tokio::test]
async fn plugin_request_ids_must_increase_from_one_and_storage_can_be_unavailable() {
    // The default host says `storage_available: false`.
    let (host, audit, _t) = host(EASY);
    let s = connected(&host, Quirk::BadRequestIds).await;
    s.call("fake.add", Some(json!({"a": 1, "b": 1})), None)
        .await
        .expect("call");
    let details: Vec<String> = violations(&audit)
        .iter()
        .inspect(|r| {
            assert_eq!(
                r.get("violation_type"),
                Violation::RequestIdNotIncreasing.as_str()
            )
        })
        .map(|r| r.get("detail").as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(details.len(), 2, "{details:?}");
    assert!(
        details[0].contains("first request has id 5, not 1"),
        "{details:?}"
    );
    assert!(details[1].contains("does not increase"), "{details:?}");
    // The storage requests were answered at once, and clearly.
    let last = s.call("fake.last", None, None).await.expect("call");
    assert_eq!(last["error"]["code"], -32003, "{last}");
    let message = last["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("storage_available: false"), "{message}");
    assert!(s.is_running());
    s.shutdown().await;
}

#[tokio::test]
async fn an_in_process_peer_ignoring_shutdown_is_cut_off() {
    // The shutdown wait is waited out; the handshake keeps its budget.
    let (host, audit, _t) = host_with(|t| Timeouts {
        shutdown: SHORT,
        ..t
    });
    let s = connected(&host, Quirk::IgnoreShutdown).await;
    assert_eq!(s.shutdown().await, ShutdownOutcome::Killed);
    assert_eq!(
        one(&audit, "plugin.killed").get("reason"),
        "shutdown_timeout"
    );
}
