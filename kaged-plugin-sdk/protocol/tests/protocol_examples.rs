//! Every JSON example of `plugin-host.md` (copied under
//! `tests/fixtures/spec-json/`) deserializes into the protocol types and
//! re-serializes unchanged.

use kaged_plugin_protocol::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/spec-json/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The envelope classifies and re-serializes unchanged.
fn envelope(name: &str) -> (RpcMessage, Value) {
    let v = fixture(name);
    let msg = RpcMessage::from_value(v.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        serde_json::to_value(&msg).unwrap(),
        v,
        "{name}: envelope round trip"
    );
    (msg, v)
}

/// `part` deserializes into `T` and re-serializes unchanged.
fn typed<T: DeserializeOwned + Serialize>(name: &str, part: &Value) -> T {
    let t: T = serde_json::from_value(part.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        &serde_json::to_value(&t).unwrap(),
        part,
        "{name}: typed round trip"
    );
    t
}

#[test]
fn initialize_request_and_response() {
    let (msg, v) = envelope("01-initialize-request");
    assert!(matches!(msg, RpcMessage::Request(ref r) if r.method == methods::INITIALIZE));
    let p: InitializeParams = typed("01", &v["params"]);
    assert_eq!((p.api_version, p.plugin_name.as_str()), (1, "oh-my-pi"));

    let (msg, v) = envelope("02-initialize-response");
    assert!(matches!(msg, RpcMessage::Response(_)));
    let r: InitializeResult = typed("02", &v["result"]);
    assert_eq!(r.methods.len(), 4);
}

#[test]
fn initialized_notification() {
    let (msg, v) = envelope("03-initialized");
    assert!(matches!(msg, RpcMessage::Notification(ref n) if n.method == "initialized"));
    let _: InitializedParams = typed("03", &v["params"]);
}

#[test]
fn method_call_carries_context() {
    let (_, v) = envelope("04-method-call-with-context");
    let ctx: PluginCallContext = typed("04", &v["params"]["_context"]);
    assert!(ctx.is_agent_call());
    assert!(ctx.check().is_ok());
}

#[test]
fn plugin_notification() {
    let (msg, _) = envelope("05-plugin-notification");
    assert!(matches!(msg, RpcMessage::Notification(ref n) if names::is_method_name(&n.method)));
}

#[test]
fn session_start_request_and_response() {
    let (_, v) = envelope("06-on-session-start-request");
    assert_eq!(
        HookName::from_method(v["method"].as_str().unwrap()),
        Some(HookName::OnSessionStart)
    );
    let _: SessionStartParams = typed("06", &v["params"]);
    let (_, v) = envelope("07-on-session-start-response");
    let r: SessionStartResult = typed("07", &v["result"]);
    assert!(r.inject.unwrap().starts_with("<plugin:memory-markdown>"));
}

#[test]
fn session_idle_request() {
    let (_, v) = envelope("08-on-session-idle-request");
    let p: SessionIdleParams = typed("08", &v["params"]);
    assert!(matches!(p.transcript, Transcript::Messages(ref m) if m.len() == 2));
}

#[test]
fn post_compact_request_and_observer_response() {
    let (_, v) = envelope("09-post-compact-request");
    let p: CompactParams = typed("09", &v["params"]);
    assert_eq!(p.role, PluginRole::Observer);
    assert!(p.messages_remaining[0].always_keep);
    let (_, v) = envelope("10-post-compact-observer-response");
    let r: ObserverResult = typed("10", &v["result"]);
    assert_eq!(r.retain.unwrap().len(), 2);
}

#[test]
fn compactor_response() {
    let (_, v) = envelope("11-compactor-response");
    let r: CompactorResult = typed("11", &v["result"]);
    assert_eq!(r.role, PluginRole::Compactor);
    assert_eq!(r.superseded, ["msg_001", "msg_002", "msg_003"]);
}

#[test]
fn storage_exec_request() {
    let (_, v) = envelope("12-storage-exec-request");
    assert_eq!(
        StorageMethod::parse(v["method"].as_str().unwrap()),
        Some(StorageMethod::Exec)
    );
    let p: StorageParams = typed("12", &v["params"]);
    assert!(p.sql.starts_with("CREATE TABLE IF NOT EXISTS presets"));
}

#[test]
fn idle_transcript_may_be_a_plain_string() {
    let v = serde_json::json!({"_context": {"operator_id": null, "project_id": "p", "agent_path": "primary",
        "session_id": "s", "request_id": "r"}, "transcript": "user: hi\nassistant: hello"});
    let p: SessionIdleParams = typed("string transcript", &v);
    assert_eq!(
        p.transcript,
        Transcript::Text("user: hi\nassistant: hello".into())
    );
}

#[test]
fn partial_context_is_a_contract_violation() {
    let ctx: PluginCallContext =
        serde_json::from_value(serde_json::json!({"operator_id": "operator",
        "project_id": "music", "agent_path": null, "session_id": null, "request_id": "r"}))
        .unwrap();
    let err = ctx.check().unwrap_err();
    assert_eq!(err.set, "project_id");
    assert_eq!(err.unset, "agent_path, session_id");
}

#[test]
fn system_results_have_the_spec_shapes() {
    assert_eq!(
        serde_json::to_value(StatusOk::ok()).unwrap(),
        serde_json::json!({"status": "ok"})
    );
    let rl = RateLimitedParams {
        limit_per_sec: 100,
        dropped: 7,
    };
    assert_eq!(
        serde_json::to_value(rl).unwrap(),
        serde_json::json!({"limit_per_sec": 100, "dropped": 7})
    );
}
