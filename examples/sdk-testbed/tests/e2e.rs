//! The SDK's edge cases over real pipes: the testbed plugin misbehaves on
//! purpose and the host simulator checks what reaches the wire.

use std::path::PathBuf;
use std::time::Duration;

use kaged_host_core::testing::StagedPlugin;
use kaged_host_core::{
    AuditLog, Direction, HostConfig, HostSim, PluginHandle, TimeScale, Transcript,
};
use serde_json::{json, Value};

struct Running {
    _staged: StagedPlugin,
    plugin: PluginHandle,
    audit: AuditLog,
    transcript: Transcript,
}

async fn launch() -> Running {
    let staged = StagedPlugin::new(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        env!("CARGO_BIN_EXE_sdk-testbed"),
    )
    .expect("stage the testbed");
    let audit = AuditLog::memory();
    let transcript = Transcript::memory();
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(0.5).expect("scale"))
            .with_audit(audit.clone())
            .with_transcript(transcript.clone()),
    );
    let plugin = host.launch(staged.dir()).await.expect("launch the testbed");
    Running {
        _staged: staged,
        plugin,
        audit,
        transcript,
    }
}

/// The next stdout message satisfying `pred`, from a raw subscription.
async fn next_matching(
    rx: &mut tokio::sync::broadcast::Receiver<Value>,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    let guard = Duration::from_secs(20);
    tokio::time::timeout(guard, async {
        loop {
            match rx.recv().await {
                Ok(v) if pred(&v) => return v,
                Ok(_) => continue,
                Err(e) => panic!("raw channel ended: {e}"),
            }
        }
    })
    .await
    .expect("the plugin did not answer")
}

#[tokio::test]
async fn a_println_in_a_handler_goes_to_stderr_not_stdout() {
    let r = launch().await;
    assert_eq!(
        r.plugin
            .call("testbed.print", None, None)
            .await
            .expect("print"),
        json!("printed")
    );
    r.plugin.shutdown().await;
    let records = r.transcript.records();
    let stderr: Vec<String> = records
        .iter()
        .filter(|rec| rec.dir == Direction::PluginStderr)
        .map(|rec| rec.msg.as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        stderr.iter().any(|l| l.contains("printed with println!")),
        "{stderr:?}"
    );
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("and this one without a newline")),
        "{stderr:?}"
    );
    assert!(
        !r.audit.names().contains(&"plugin.stdout_noise"),
        "{:?}",
        r.audit.names()
    );
}

#[tokio::test]
async fn a_panicking_handler_answers_internal_error_and_the_plugin_keeps_serving() {
    let r = launch().await;
    let err = r
        .plugin
        .call("testbed.panic", None, None)
        .await
        .expect_err("panics");
    assert_eq!(err.code(), -32603);
    assert!(
        err.rpc_error().message.contains("deliberate panic"),
        "{:?}",
        err.rpc_error()
    );
    let echo = r
        .plugin
        .call("testbed.echo", Some(json!({"x": 1})), None)
        .await
        .expect("still serving");
    assert_eq!(echo["params"], json!({"x": 1}));
    assert!(r.plugin.shutdown().await.is_clean());
}

#[tokio::test]
async fn ten_concurrent_calls_are_all_answered() {
    let r = launch().await;
    let calls = (0..10u64).map(|i| {
        r.plugin
            .call("testbed.sleep", Some(json!({"ms": 50 + i})), None)
    });
    let answers = futures_util::future::join_all(calls).await;
    let mut got: Vec<u64> = answers
        .into_iter()
        .map(|a| a.expect("answered").as_u64().expect("number"))
        .collect();
    got.sort();
    assert_eq!(got, (0..10).map(|i| 50 + i).collect::<Vec<_>>());
    r.plugin.shutdown().await;
}

#[tokio::test]
async fn a_batch_gets_invalid_request_with_null_id_and_serving_goes_on() {
    let r = launch().await;
    let raw = r.plugin.raw();
    let mut rx = raw.inbound();
    assert!(raw.send_line(br#"[{"jsonrpc":"2.0","id":99,"method":"ping"}]"#));
    let answer = next_matching(&mut rx, |v| v.get("error").is_some()).await;
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32600);
    r.plugin.ping().await.expect("still serving");
    r.plugin.shutdown().await;
}

#[tokio::test]
async fn an_incoming_line_over_4_mib_is_refused_and_serving_goes_on() {
    let r = launch().await;
    let raw = r.plugin.raw();
    let mut rx = raw.inbound();
    let mut big = br#"{"jsonrpc":"2.0","id":77,"method":"testbed.echo","params":{"x":""#.to_vec();
    big.extend(std::iter::repeat_n(b'x', 5 * 1024 * 1024));
    big.extend_from_slice(b"\"}}");
    assert!(raw.send_line(&big));
    let answer = next_matching(&mut rx, |v| v.get("error").is_some()).await;
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (Value::Null, json!(-32600))
    );
    r.plugin.ping().await.expect("still serving");
    r.plugin.shutdown().await;
}

#[tokio::test]
async fn an_answer_over_4_mib_becomes_an_internal_error() {
    let r = launch().await;
    let err = r
        .plugin
        .call("testbed.big", Some(json!({"bytes": 5 * 1024 * 1024})), None)
        .await
        .expect_err("too large");
    assert_eq!(err.code(), -32603);
    assert!(err.rpc_error().message.contains("response too large"));
    assert!(!r.audit.names().contains(&"protocol.oversize_message"));
    assert!(r.plugin.is_running());
    r.plugin.shutdown().await;
}

#[tokio::test]
async fn a_call_before_initialized_gets_not_initialized() {
    let staged = StagedPlugin::new(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        env!("CARGO_BIN_EXE_sdk-testbed"),
    )
    .expect("stage");
    let host =
        HostSim::new(HostConfig::default().with_time_scale(TimeScale::new(0.5).expect("scale")));
    let plugin = host.launch_lenient(staged.dir()).await.expect("spawn");
    let raw = plugin.raw();
    let mut rx = raw.inbound();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"daemon_version": "0.1.0",
        "api_version": 1, "plugin_name": "sdk-testbed", "storage_available": false, "projects": []}});
    assert!(raw.send_value(&init));
    next_matching(&mut rx, |v| v["id"] == 1).await;
    assert!(
        raw.send_value(&json!({"jsonrpc": "2.0", "id": 2, "method": "testbed.echo", "params": {}}))
    );
    let early = next_matching(&mut rx, |v| v["id"] == 2).await;
    assert_eq!(early["error"]["code"], -32002);
    plugin.shutdown().await;
}

#[tokio::test]
async fn notifications_reach_the_host() {
    let r = launch().await;
    let mut notes = r.plugin.notifications();
    r.plugin
        .call("testbed.notify", None, None)
        .await
        .expect("notify");
    let n = tokio::time::timeout(Duration::from_secs(20), notes.recv())
        .await
        .expect("notification")
        .expect("open");
    assert_eq!(n.method, "testbed.poked");
    assert_eq!(n.params, Some(json!({"by": "testbed.notify"})));
    r.plugin.shutdown().await;
}

/// Architecture rule 3 over real pipes, on the one-thread blocking loop: a
/// handler waiting for the host's storage answer never stops the plugin
/// reading, so pings and other calls are answered while it waits, and its
/// own answer comes once the host answers it.
#[tokio::test]
async fn a_handler_waiting_on_storage_never_stops_the_reader() {
    let staged = StagedPlugin::new(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        env!("CARGO_BIN_EXE_sdk-testbed"),
    )
    .expect("stage the testbed");
    let (handler, mut gate) = kaged_host_core::testing::gated::GatedHandler::new(
        std::sync::Arc::new(kaged_host_storage::BrokerHandler::temp().expect("a broker")),
    );
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(0.5).expect("scale"))
            .with_storage(std::sync::Arc::new(handler)),
    );
    let plugin = std::sync::Arc::new(host.launch(staged.dir()).await.expect("launch"));
    let waiting = tokio::spawn({
        let s = plugin.clone();
        async move { s.call("testbed.store", None, None).await }
    });
    // The handler's storage request reached the host and is held there:
    // from here on the plugin's handler is waiting on it.
    let method = gate
        .arrived()
        .await
        .expect("testbed.store sends a storage request");
    assert!(method.starts_with("kaged.storage."), "{method}");
    // While it waits: pings, a call, a call that sleeps.
    for _ in 0..3 {
        plugin
            .ping()
            .await
            .expect("a ping is answered while a handler waits");
    }
    let echo = plugin
        .call("testbed.echo", Some(json!({"x": 2})), None)
        .await
        .expect("answered while a handler waits");
    assert_eq!(echo["params"], json!({"x": 2}));
    assert!(
        !waiting.is_finished(),
        "the storage call cannot finish before its answer"
    );
    gate.open();
    let stored = waiting
        .await
        .expect("task")
        .expect("answered once the host answers");
    assert_eq!(stored, json!({"rows": [{"one": 1}]}));
    assert!(plugin.shutdown().await.is_clean());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_storage_requests_from_worker_threads_reach_the_host_with_increasing_ids() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let staged = StagedPlugin::new(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        env!("CARGO_BIN_EXE_sdk-testbed"),
    )
    .expect("stage the testbed");
    let audit = AuditLog::memory();
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(0.5).expect("scale"))
            .with_audit(audit.clone())
            .with_storage(Arc::new(
                kaged_host_storage::BrokerHandler::temp().expect("a broker"),
            )),
    );
    let plugin = host.launch(staged.dir()).await.expect("launch");
    // Load: more spinning threads than cores, so the plugin's two workers
    // are preempted between taking a request id and sending the request.
    // Bounded: they stop with the flag, and are joined below.
    let stop = Arc::new(AtomicBool::new(false));
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let spinners: Vec<_> = (0..=cores)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    // 48 at a time: under the host's bound on requests in flight (64).
    let mut answered = Vec::new();
    for _ in 0..20 {
        answered.push(
            plugin
                .call("testbed.store_many", Some(json!({"n": 48})), None)
                .await,
        );
    }
    stop.store(true, Ordering::Relaxed);
    for s in spinners {
        s.join().expect("spinner");
    }
    for a in answered {
        assert_eq!(a.expect("answered"), json!(48));
    }
    let violations: Vec<String> = audit
        .events()
        .into_iter()
        .filter(|r| r.event == kaged_host_core::AuditEvent::ProtocolViolation)
        .map(|r| serde_json::Value::Object(r.data).to_string())
        .collect();
    assert!(
        violations.is_empty(),
        "the SDK's request ids must increase on the wire: {violations:?}"
    );
    assert!(plugin.shutdown().await.is_clean());
}
