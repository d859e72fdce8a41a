//! The echo plugin end to end, as a real process driven by the host
//! simulator: handshake transcript, calls, tools, notifications, shutdown.

use std::path::PathBuf;

use kaged_host_core::normal::{self, NormalOptions};
use kaged_host_core::testing::StagedPlugin;
use kaged_host_core::{
    AuditLog, CallError, HostConfig, HostSim, ShutdownOutcome, TimeScale, Transcript,
};
use kaged_plugin_sdk::protocol::PluginCallContext;
use serde_json::json;

fn stage() -> StagedPlugin {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    StagedPlugin::new(&dir, env!("CARGO_BIN_EXE_echo")).expect("stage the echo plugin")
}

/// Shutdown timeout 5 s x 0.2 = 1 s: a clean `Exited` outcome proves the
/// plugin exited within a second, without timing anything in the test.
fn host(scale: f64) -> (HostSim, AuditLog, Transcript) {
    let audit = AuditLog::memory();
    let transcript = Transcript::memory();
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(scale).expect("scale"))
            .with_audit(audit.clone())
            .with_transcript(transcript.clone()),
    );
    (host, audit, transcript)
}

#[tokio::test]
async fn handshake_call_and_shutdown_transcript() {
    let staged = stage();
    let (host, audit, transcript) = host(0.2);
    let plugin = host.launch(staged.dir()).await.expect("launch echo");
    let ctx = PluginCallContext::agent("music", "primary", "ses_1", "req_1");
    let said = plugin
        .call("echo.say", Some(json!({"text": "hello"})), Some(ctx))
        .await
        .expect("echo.say");
    assert_eq!(said, json!({"said": "hello", "agent_path": "primary"}));
    let tool_ctx = PluginCallContext::agent("music", "primary", "ses_1", "req_2");
    let shout = plugin
        .call(
            "echo.shout",
            Some(json!({"text": "hey", "bangs": 2})),
            Some(tool_ctx),
        )
        .await
        .expect("tool");
    assert_eq!(shout, json!("HEY!!"));
    let outcome = plugin.shutdown().await;
    assert!(
        matches!(outcome, ShutdownOutcome::Exited(e) if e.code == Some(0)),
        "{outcome:?}"
    );
    insta::assert_json_snapshot!(
        "echo_transcript",
        normal::of(
            &transcript,
            &NormalOptions::for_plugin(env!("CARGO_MANIFEST_DIR").as_ref())
        )
        .to_values()
    );
    let names = audit.names();
    for expected in [
        "plugin.spawned",
        "plugin.initialized",
        "plugin.method_called",
        "plugin.method_returned",
        "plugin.notification",
        "plugin.exited",
        "plugin.stopped",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    for unexpected in [
        "plugin.stdout_noise",
        "plugin.protocol_violation",
        "plugin.crashed",
        "plugin.killed",
    ] {
        assert!(!names.contains(&unexpected), "{unexpected} in {names:?}");
    }
}

#[tokio::test]
async fn tool_arguments_that_break_the_schema_get_invalid_params() {
    let staged = stage();
    let (host, _, _) = host(0.2);
    let plugin = host.launch(staged.dir()).await.expect("launch echo");
    // Tools are dispatched by agents: the host refuses one without an
    // agent context before sending anything.
    let refused = plugin
        .call("echo.shout", Some(json!({"text": "hey", "bangs": 1})), None)
        .await
        .expect_err("no agent context");
    assert!(
        matches!(refused, CallError::ToolNeedsAgentContext { .. }),
        "{refused}"
    );
    let ctx = PluginCallContext::agent("music", "primary", "ses_1", "req_1");
    let err = plugin
        .call(
            "echo.shout",
            Some(json!({"text": "hey", "bangs": 99})),
            Some(ctx),
        )
        .await
        .expect_err("bangs is at most 10");
    assert_eq!(err.code(), -32602);
    assert!(
        err.rpc_error().message.contains("/bangs"),
        "{:?}",
        err.rpc_error()
    );
    plugin.shutdown().await;
}

#[tokio::test]
async fn shutdown_as_a_request_is_answered_and_the_plugin_exits_zero() {
    let staged = stage();
    let (host, _, _) = host(0.2);
    let plugin = host.launch(staged.dir()).await.expect("launch echo");
    let pid = plugin.pid().expect("pid");
    let answer = plugin
        .raw()
        .request("shutdown", Some(json!({})), plugin.timeouts().shutdown)
        .await
        .expect("shutdown answered");
    assert_eq!(answer, json!({"status": "ok"}));
    let exit = plugin
        .wait_exit(plugin.timeouts().shutdown)
        .await
        .expect("exited within the shutdown timeout");
    assert_eq!(exit.code, Some(0));
    assert!(!kaged_host_core::group_alive(pid));
}

#[tokio::test]
async fn stdin_eof_makes_the_plugin_exit() {
    let staged = stage();
    let (host, _, _) = host(0.2);
    let plugin = host.launch(staged.dir()).await.expect("launch echo");
    plugin.close_stdin();
    let exit = plugin
        .wait_exit(plugin.timeouts().shutdown)
        .await
        .expect("exited after EOF");
    assert_eq!(exit.code, Some(0));
}

/// `kaged_host_sim::bench` (what `kaged-host-sim bench` runs) against the
/// echo plugin: both phases answered without error. Speed is printed by
/// the command, never asserted.
#[tokio::test]
async fn the_bench_runs_against_echo() {
    let staged = stage();
    let (host, _audit, _transcript) = host(1.0);
    let plugin = host.launch(staged.dir()).await.expect("launch echo");
    let opts = kaged_host_sim::bench::BenchOptions {
        method: "echo.say".into(),
        params: Some(json!({"text": "hi"})),
        context: Some(PluginCallContext::agent(
            "music", "primary", "ses_1", "req_1",
        )),
        calls: 200,
        concurrency: 8,
        warmup: 10,
        ..Default::default()
    };
    let report = kaged_host_sim::bench::bench(&plugin, &opts).await;
    plugin.shutdown().await;
    for p in [&report.one_at_a_time, &report.pipelined] {
        assert_eq!((p.calls, p.errors), (200, 0), "{p:?}");
        assert!(p.p50_us <= p.p99_us && p.p99_us <= p.max_us, "{p:?}");
    }
    assert_eq!(report.pipelined.concurrency, 8);
    assert!(report.render().contains("pipelined (8 in flight)"));
}
