//! The SDK runtime over an in-process pipe: every protocol rule of the
//! plugin side, checked byte for byte against a raw JSON "host".

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use kaged_plugin_sdk::protocol::{PluginCallContext, SqlValue};
use kaged_plugin_sdk::storage::StorageError;
use kaged_plugin_sdk::{Call, Plugin, PluginError, ServeExit};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use support::{agent_context, Wire};

#[derive(Deserialize)]
struct Echo {
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Config {
    store: String,
    #[serde(default)]
    limit: u32,
}

fn testbed(shutdown_flag: Arc<AtomicBool>, barrier: Arc<tokio::sync::Barrier>) -> Plugin {
    Plugin::builder("testbed")
        .version("1.2.3")
        .capability_used("kaged:storage:read")
        .method("test.echo", |p: Echo, _c: Call| async move {
            Ok::<_, PluginError>(json!({"text": p.text}))
        })
        .method("test.context", |_p: Value, c: Call| async move {
            Ok::<_, PluginError>(c.context)
        })
        .method("test.params", |p: Value, _c: Call| async move {
            Ok::<_, PluginError>(p)
        })
        .method("test.fail", |_p: Value, _c: Call| async move {
            Err::<Value, _>(PluginError::new("preset missing").with_data(json!({"name": "x"})))
        })
        .method("test.panic", |_p: Value, _c: Call| async move {
            if true {
                panic!("boom in handler");
            }
            Ok::<Value, PluginError>(Value::Null)
        })
        .method("test.big", |p: Value, _c: Call| async move {
            let n = p["bytes"].as_u64().unwrap_or(0) as usize;
            Ok::<_, PluginError>("x".repeat(n))
        })
        .method("test.barrier", move |_p: Value, _c: Call| {
            let barrier = Arc::clone(&barrier);
            async move {
                barrier.wait().await;
                Ok::<_, PluginError>("released")
            }
        })
        .method("test.query", |_p: Value, c: Call| async move {
            #[derive(Deserialize, serde::Serialize)]
            struct Row {
                id: String,
                n: i64,
            }
            let rows: Vec<Row> = c
                .host
                .storage()
                .query_as(
                    "SELECT id, n FROM t WHERE id = ?",
                    vec![SqlValue::from("a")],
                )
                .await?;
            Ok::<_, PluginError>(rows)
        })
        .method("test.denied", |_p: Value, c: Call| async move {
            match c.host.storage().exec("DROP TABLE x", vec![]).await {
                Err(StorageError::Denied(e)) => Ok::<_, PluginError>(json!({"denied": e.code})),
                other => Err(PluginError::new(format!("unexpected: {other:?}"))),
            }
        })
        .tool(
            "add",
            "Add two integers.",
            |a: AddArgs, _c: Call| async move { Ok::<_, PluginError>(a.a + a.b) },
        )
        .notification("test.happened")
        .on_config(|c: Config, _h| async move {
            if c.store.is_empty() || c.limit > 100 {
                return Err(PluginError::config_invalid("store must not be empty"));
            }
            Ok(())
        })
        .on_shutdown(move || {
            let flag = Arc::clone(&shutdown_flag);
            async move { flag.store(true, Ordering::SeqCst) }
        })
        .build()
        .expect("valid plugin")
}

fn plugin() -> Plugin {
    testbed(
        Arc::new(AtomicBool::new(false)),
        Arc::new(tokio::sync::Barrier::new(10)),
    )
}

#[tokio::test]
async fn handshake_answers_name_version_methods_and_capabilities() {
    let mut w = Wire::start(plugin());
    let init = w.initialize().await;
    assert_eq!(init["id"], 0);
    let r = &init["result"];
    assert_eq!(r["name"], "testbed");
    assert_eq!(r["version"], "1.2.3");
    assert_eq!(r["api_version"], 1);
    let methods: Vec<&str> = r["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(
        methods.contains(&"test.echo") && methods.contains(&"testbed.add"),
        "{methods:?}"
    );
    assert!(!methods.contains(&"ping"));
    assert_eq!(r["notifications"], json!(["test.happened"]));
    assert_eq!(r["capabilities_used"], json!(["kaged:storage:read"]));
}

#[tokio::test]
async fn calls_before_initialized_get_not_initialized() {
    let mut w = Wire::start(plugin());
    let early = w.request(1, "test.echo", json!({"text": "x"})).await;
    assert_eq!(early["error"]["code"], -32002);
    w.initialize().await;
    let between = w.request(2, "ping", json!({})).await;
    assert_eq!(
        between["error"]["code"], -32002,
        "initialized has not arrived yet"
    );
    w.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        .await;
    assert_eq!(
        w.request(3, "ping", json!({})).await["result"],
        json!({"status": "ok"})
    );
}

#[tokio::test]
async fn malformed_input_is_answered_and_the_plugin_keeps_serving() {
    let (mut w, _) = Wire::ready(plugin()).await;
    w.send_raw(b"{not json\n").await;
    let parse = w.recv().await;
    assert_eq!(parse["error"]["code"], -32700);
    assert_eq!(parse["id"], Value::Null);

    w.send_raw(b"[{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}]\n")
        .await;
    let batch = w.recv().await;
    assert_eq!(batch["error"]["code"], -32600);
    assert_eq!(batch["id"], Value::Null);

    w.send(json!({"id": 6, "method": "ping"})).await;
    let invalid = w.recv().await;
    assert_eq!(invalid["error"]["code"], -32600);
    assert_eq!(invalid["id"], 6);

    assert_eq!(
        w.request(7, "ping", json!({})).await["result"]["status"],
        "ok"
    );
}

#[tokio::test]
async fn ids_are_echoed_verbatim() {
    let (mut w, _) = Wire::ready(plugin()).await;
    for id in [
        json!("abc"),
        json!(1.5),
        json!(-3),
        json!(9007199254740993u64),
    ] {
        w.send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
        assert_eq!(w.recv().await["id"], id);
    }
}

#[tokio::test]
async fn unknown_methods_bad_params_and_handler_errors() {
    let (mut w, _) = Wire::ready(plugin()).await;
    assert_eq!(
        w.request(1, "test.nope", json!({})).await["error"]["code"],
        -32601
    );

    let bad = w.request(2, "test.echo", json!({"text": 5})).await;
    assert_eq!(bad["error"]["code"], -32602);
    assert!(
        bad["error"]["message"].as_str().unwrap().contains("text"),
        "{bad}"
    );
    let missing = w.request(3, "test.echo", json!({})).await;
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing field `text`"),
        "{missing}"
    );

    let fail = w.request(4, "test.fail", json!({})).await;
    assert_eq!(
        fail["error"],
        json!({"code": -32000, "message": "preset missing", "data": {"name": "x"}})
    );
}

#[tokio::test]
async fn tools_validate_arguments_against_their_schema() {
    let (mut w, _) = Wire::ready(plugin()).await;
    assert_eq!(
        w.request(1, "testbed.add", json!({"a": 2, "b": 3})).await["result"],
        5
    );
    let bad = w
        .request(2, "testbed.add", json!({"a": "two", "b": 3}))
        .await;
    assert_eq!(bad["error"]["code"], -32602);
    assert!(
        bad["error"]["message"].as_str().unwrap().contains("/a"),
        "{bad}"
    );
    let missing = w.request(3, "testbed.add", json!({"a": 1})).await;
    assert_eq!(missing["error"]["code"], -32602);
    // serde's "missing field `b`", or with the `schema-validation` feature
    // jsonschema's "\"b\" is a required property".
    let message = missing["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`b`") || message.contains("\"b\""),
        "{missing}"
    );
}

#[tokio::test]
async fn context_is_taken_out_of_params_and_handed_over() {
    let (mut w, _) = Wire::ready(plugin()).await;
    let ctx = w
        .request(
            1,
            "test.context",
            json!({"_context": agent_context(), "x": 1}),
        )
        .await;
    let got: PluginCallContext = serde_json::from_value(ctx["result"].clone()).unwrap();
    assert_eq!(got.agent_path.as_deref(), Some("primary"));
    let params = w
        .request(
            2,
            "test.params",
            json!({"_context": agent_context(), "x": 1}),
        )
        .await;
    assert_eq!(params["result"], json!({"x": 1}));
    let none = w.request(3, "test.context", json!({})).await;
    assert_eq!(none["result"], Value::Null);
    let broken = w
        .request(4, "test.context", json!({"_context": {"request_id": 5}}))
        .await;
    assert_eq!(broken["error"]["code"], -32602);
}

#[tokio::test]
async fn a_panicking_handler_answers_internal_error_and_serving_goes_on() {
    let (mut w, _) = Wire::ready(plugin()).await;
    let p = w.request(1, "test.panic", json!({})).await;
    assert_eq!(p["error"]["code"], -32603);
    assert!(
        p["error"]["message"]
            .as_str()
            .unwrap()
            .contains("boom in handler"),
        "{p}"
    );
    assert_eq!(
        w.request(2, "test.echo", json!({"text": "still"})).await["result"]["text"],
        "still"
    );
}

#[tokio::test]
async fn ten_concurrent_calls_are_in_flight_together() {
    // The handler waits on a 10-party barrier: it completes only when all
    // ten calls run at the same time.
    let (mut w, _) = Wire::ready(plugin()).await;
    for id in 1..=10 {
        w.send(json!({"jsonrpc": "2.0", "id": id, "method": "test.barrier", "params": {}}))
            .await;
    }
    let mut ids: Vec<i64> = Vec::new();
    for _ in 0..10 {
        let r = w.recv().await;
        assert_eq!(r["result"], "released");
        ids.push(r["id"].as_i64().unwrap());
    }
    ids.sort();
    assert_eq!(ids, (1..=10).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_handler_awaiting_storage_does_not_block_the_reader() {
    let (mut w, _) = Wire::ready(plugin()).await;
    w.send(json!({"jsonrpc": "2.0", "id": 1, "method": "test.query", "params": {}}))
        .await;
    let req = w.recv().await;
    assert_eq!(req["method"], "kaged.storage.query");
    assert_eq!(req["id"], 1, "plugin-to-host ids count from 1");
    assert_eq!(
        req["params"],
        json!({"sql": "SELECT id, n FROM t WHERE id = ?", "params": ["a"]})
    );
    // While the handler waits, the plugin still answers other calls.
    assert_eq!(
        w.request(2, "ping", json!({})).await["result"]["status"],
        "ok"
    );
    w.send(json!({"jsonrpc": "2.0", "id": 1, "result": {"rows": [{"id": "a", "n": 7}], "columns": ["id", "n"]}})).await;
    let answer = w.recv().await;
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"], json!([{"id": "a", "n": 7}]));

    w.send(json!({"jsonrpc": "2.0", "id": 3, "method": "test.denied", "params": {}}))
        .await;
    let req = w.recv().await;
    assert_eq!(
        (req["method"].as_str(), req["id"].as_i64()),
        (Some("kaged.storage.exec"), Some(2))
    );
    w.send(json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32003, "message": "storage access denied"}})).await;
    assert_eq!(w.recv().await["result"], json!({"denied": -32003}));
}

#[tokio::test]
async fn config_update_deserializes_into_the_config_type() {
    let (mut w, _) = Wire::ready(plugin()).await;
    assert_eq!(
        w.request(1, "config.update", json!({"store": "/m", "limit": 3}))
            .await["result"]["status"],
        "ok"
    );
    let bad = w
        .request(2, "config.update", json!({"store": "/m", "limit": "many"}))
        .await;
    assert_eq!(bad["error"]["code"], -32004);
    assert!(
        bad["error"]["message"].as_str().unwrap().contains("limit"),
        "{bad}"
    );
    let rejected = w.request(3, "config.update", json!({"store": ""})).await;
    assert_eq!(rejected["error"]["code"], -32004);
    let unknown = w
        .request(4, "config.update", json!({"store": "/m", "colour": 1}))
        .await;
    assert_eq!(unknown["error"]["code"], -32004);
}

#[tokio::test]
async fn projects_activated_and_deactivated_are_acknowledged() {
    let (mut w, _) = Wire::ready(plugin()).await;
    let a = w
        .request(
            1,
            "projects.activated",
            json!({"project": "music", "config": {}}),
        )
        .await;
    assert_eq!(a["result"]["status"], "ok");
    let d = w
        .request(2, "projects.deactivated", json!({"project": "music"}))
        .await;
    assert_eq!(d["result"]["status"], "ok");
}

#[tokio::test]
async fn an_incoming_line_over_4_mib_is_refused_and_discarded() {
    let (mut w, _) = Wire::ready(plugin()).await;
    let mut big = br#"{"jsonrpc":"2.0","id":1,"method":"test.echo","params":{"text":""#.to_vec();
    big.extend(std::iter::repeat_n(b'x', 5 * 1024 * 1024));
    big.extend_from_slice(b"\"}}\n");
    w.send_raw(&big).await;
    let r = w.recv().await;
    assert_eq!(r["error"]["code"], -32600);
    assert_eq!(r["id"], Value::Null);
    assert_eq!(
        w.request(2, "ping", json!({})).await["result"]["status"],
        "ok"
    );
}

#[tokio::test]
async fn a_response_over_4_mib_becomes_an_internal_error() {
    let (mut w, _) = Wire::ready(plugin()).await;
    let r = w
        .request(1, "test.big", json!({"bytes": 5 * 1024 * 1024}))
        .await;
    assert_eq!(r["id"], 1);
    assert_eq!(r["error"]["code"], -32603);
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("response too large"));
    let ok = w.request(2, "test.big", json!({"bytes": 1024})).await;
    assert_eq!(ok["result"].as_str().unwrap().len(), 1024);
}

#[tokio::test]
async fn shutdown_notification_runs_the_handler_and_returns() {
    let flag = Arc::new(AtomicBool::new(false));
    let (mut w, _) = Wire::ready(testbed(
        Arc::clone(&flag),
        Arc::new(tokio::sync::Barrier::new(1)),
    ))
    .await;
    w.send(json!({"jsonrpc": "2.0", "method": "shutdown"}))
        .await;
    assert_eq!(w.exit().await, ServeExit::Shutdown);
    assert!(flag.load(Ordering::SeqCst));
    assert!(w.recv_eof().await);
}

#[tokio::test]
async fn shutdown_request_is_answered_then_returns() {
    let flag = Arc::new(AtomicBool::new(false));
    let (mut w, _) = Wire::ready(testbed(
        Arc::clone(&flag),
        Arc::new(tokio::sync::Barrier::new(1)),
    ))
    .await;
    let r = w.request(9, "shutdown", json!({})).await;
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 9, "result": {"status": "ok"}})
    );
    assert_eq!(w.exit().await, ServeExit::Shutdown);
    assert!(flag.load(Ordering::SeqCst));
}

#[tokio::test]
async fn end_of_input_returns_eof() {
    let (mut w, _) = Wire::ready(plugin()).await;
    w.close().await;
    assert_eq!(w.exit().await, ServeExit::Eof);
}

#[test]
fn definition_errors_are_reported_together() {
    let err = Plugin::builder("Bad_Name")
        .method("kaged.thing", |_p: Value, _c: Call| async {
            Ok::<_, PluginError>(())
        })
        .method("single", |_p: Value, _c: Call| async {
            Ok::<_, PluginError>(())
        })
        .tool("Two.Segments", "x", |_a: AddArgs, _c: Call| async {
            Ok::<_, PluginError>(())
        })
        .build()
        .err()
        .expect("invalid definition")
        .to_string();
    for needle in ["Bad_Name", "kaged.", "single", "Two.Segments", "no version"] {
        assert!(err.contains(needle), "{needle} missing from: {err}");
    }
}

#[test]
fn tool_schemas_are_objects_and_valid() {
    let p = plugin();
    assert!(p.check_tools().is_ok());
    let add = &p.tools()[0];
    assert_eq!(add.parameters_schema["type"], "object");
    assert_eq!(add.parameters_schema["required"], json!(["a", "b"]));
}
