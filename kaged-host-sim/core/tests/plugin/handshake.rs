//! Handshake: the happy path (snapshot) and every row of "Handshake failure
//! modes", plus launch-failure classification. Real subprocesses.

use crate::support::host::{assert_group_gone, fixture, host, one, EASY, FAST, LIMIT};
use kaged_host_core::normal::{self, NormalOptions};
use kaged_host_core::{HandshakeError, LaunchError, SpawnError};

#[tokio::test]
async fn good_plugin_handshake_is_clean_and_snapshotted() {
    let (host, audit, transcript) = host(EASY);
    let s = host.launch(&fixture("good")).await.expect("launch");
    let pid = s.pid().expect("pid");
    let info = s.handshake_info().expect("handshake info");
    assert!(info.unavailable_methods.is_empty() && info.extra_methods.is_empty());
    // ADDENDUM §1: the prefixed tool name is a declared method, not "extra".
    assert!(info.available_methods.contains(&"good.echo".to_string()));
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned"
        ]
    );
    let spawned = one(&audit, "plugin.spawned");
    assert_eq!(spawned.get("version"), "1.0.0");
    assert_eq!(spawned.get("pid"), pid);
    let init = one(&audit, "plugin.initialized");
    assert_eq!(init.get("methods_count"), 6);
    assert_eq!(init.get("capabilities_count"), 1);
    let outcome = s.shutdown().await;
    assert!(outcome.is_clean(), "{outcome:?}");
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
    assert_eq!(one(&audit, "plugin.exited").get("exit_code"), 0);
    assert_group_gone(pid);
    insta::assert_json_snapshot!(
        "good_handshake",
        normal::of(&transcript, &NormalOptions::for_plugin(&fixture("good"))).to_values()
    );
}

/// Launch a fixture that must fail; return the error and the audit names.
async fn failing(name: &str, scale: f64) -> (LaunchError, kaged_host_core::AuditLog) {
    let (host, audit, _t) = host(scale);
    let err = match host.launch(&fixture(name)).await {
        Ok(s) => panic!("{name} launched: {:?}", s.handshake_info()),
        Err(e) => e,
    };
    // Whatever was started is gone by the time launch returns.
    for ev in audit.events() {
        if let Some(pid) = ev.get("pid").as_u64() {
            assert_group_gone(pid as u32);
        }
    }
    (err, audit)
}

fn handshake_error(e: LaunchError) -> HandshakeError {
    match e {
        LaunchError::Handshake { source, .. } => source,
        other => panic!("expected a handshake error, got {other:?}"),
    }
}

fn killed_reason(audit: &kaged_host_core::AuditLog) -> String {
    one(audit, "plugin.killed")
        .get("reason")
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn silent_plugin_is_killed_after_the_initialize_timeout() {
    let (e, audit) = failing("silent", FAST).await;
    assert!(matches!(handshake_error(e), HandshakeError::Timeout(_)));
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialize_timeout",
            "plugin.killed"
        ]
    );
    assert_eq!(killed_reason(&audit), "initialize_timeout");
}

#[tokio::test]
async fn api_mismatch_is_killed_and_logs_both_versions() {
    let (e, audit) = failing("api-mismatch", EASY).await;
    assert_eq!(
        handshake_error(e),
        HandshakeError::ApiMismatch {
            daemon: 1,
            plugin: 99
        }
    );
    assert_eq!(
        audit.names(),
        ["plugin.spawned", "plugin.api_mismatch", "plugin.killed"]
    );
    let ev = one(&audit, "plugin.api_mismatch");
    assert_eq!(ev.get("daemon_api_version"), 1);
    assert_eq!(ev.get("plugin_api_version"), 99);
}

#[tokio::test]
async fn name_mismatch_is_killed() {
    let (e, audit) = failing("name-mismatch", EASY).await;
    assert!(matches!(
        handshake_error(e),
        HandshakeError::NameMismatch { .. }
    ));
    assert_eq!(
        audit.names(),
        ["plugin.spawned", "plugin.name_mismatch", "plugin.killed"]
    );
    let ev = one(&audit, "plugin.name_mismatch");
    assert_eq!(ev.get("expected"), "name-mismatch");
    assert_eq!(ev.get("got"), "someone-else");
}

#[tokio::test]
async fn version_mismatch_is_killed() {
    let (e, audit) = failing("version-mismatch", EASY).await;
    assert!(matches!(
        handshake_error(e),
        HandshakeError::VersionMismatch { .. }
    ));
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "initialize.version_mismatch",
            "plugin.killed"
        ]
    );
    assert_eq!(
        one(&audit, "initialize.version_mismatch").get("got"),
        "9.9.9"
    );
}

#[tokio::test]
async fn capability_overreach_is_killed_with_claimed_and_allowed() {
    let (e, audit) = failing("capability-overreach", EASY).await;
    match handshake_error(e) {
        HandshakeError::CapabilityOverreach { excess, .. } => {
            assert_eq!(excess, ["exec:bash:/usr/bin"])
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.capability_overreach",
            "plugin.killed"
        ]
    );
    let ev = one(&audit, "plugin.capability_overreach");
    assert_eq!(
        ev.get("claimed"),
        &serde_json::json!(["read:fs:/tmp", "exec:bash:/usr/bin"])
    );
    assert_eq!(ev.get("allowed"), &serde_json::json!(["read:fs:/tmp"]));
}

#[tokio::test]
async fn speaking_before_initialize_is_a_fatal_violation() {
    let (e, audit) = failing("speaks-before-initialize", EASY).await;
    assert!(matches!(
        handshake_error(e),
        HandshakeError::ProtocolViolation { .. }
    ));
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.protocol_violation",
            "plugin.killed"
        ]
    );
    // The fixture speaks before it reads anything, but the host has sent
    // `initialize` by the time it reads the line: `launch` starts the
    // connection's reader task and moves to `InitializeSent` in one poll
    // (no `.await` between them), and this current-thread runtime runs the
    // reader only after that. So the kind is always "before initialized";
    // "before initialize" is what a host that never sent it sees
    // (`lenient_launch_sees_a_message_before_initialize_was_sent`).
    assert_eq!(
        one(&audit, "plugin.protocol_violation").get("violation_type"),
        "message_before_initialized"
    );
}

#[tokio::test]
async fn lenient_launch_sees_a_message_before_initialize_was_sent() {
    let (host, audit, _t) = host(EASY);
    let s = host
        .launch_lenient(&fixture("speaks-before-initialize"))
        .await
        .expect("spawn");
    let pid = s.pid().expect("pid");
    // No initialize is ever sent: the early notification alone is fatal.
    s.wait_exit(LIMIT).await.expect("killed");
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.protocol_violation",
            "plugin.killed"
        ]
    );
    assert_eq!(
        one(&audit, "plugin.protocol_violation").get("violation_type"),
        "message_before_initialize"
    );
    assert_group_gone(pid);
}

#[tokio::test]
async fn malformed_initialize_result_is_a_fatal_violation() {
    let (e, audit) = failing("malformed-initialize-result", EASY).await;
    assert!(matches!(handshake_error(e), HandshakeError::Malformed(_)));
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.protocol_violation",
            "plugin.killed"
        ]
    );
    assert_eq!(
        one(&audit, "plugin.protocol_violation").get("violation_type"),
        "malformed_initialize_result"
    );
}

#[tokio::test]
async fn an_error_answer_to_initialize_is_a_fatal_violation() {
    let (e, audit) = failing("initialize-error", EASY).await;
    assert!(matches!(handshake_error(e), HandshakeError::ErrorAnswer(ref r) if r.code == -32000));
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
async fn methods_drift_is_tolerated_with_unavailable_methods() {
    let (host, audit, _t) = host(EASY);
    let s = host
        .launch(&fixture("methods-drift"))
        .await
        .expect("launch");
    let info = s.handshake_info().expect("info");
    assert_eq!(info.extra_methods, ["extra.thing"]);
    assert_eq!(info.unavailable_methods, ["missing.thing"]);
    let e = s.call("missing.thing", None, None).await.unwrap_err();
    assert_eq!(e.code(), -32601);
    let e = s.call("extra.thing", None, None).await.unwrap_err();
    assert_eq!(e.code(), -32601);
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned"
        ]
    );
    assert_eq!(one(&audit, "plugin.initialized").get("methods_count"), 1);
    s.shutdown().await;
}

#[tokio::test]
async fn exits_at_once_is_classified_and_audited_as_a_crash() {
    let (e, audit) = failing("exits-at-once", EASY).await;
    match e {
        LaunchError::ExitedAtOnce { exit, stderr, .. } => {
            assert_eq!(exit.and_then(|x| x.code), Some(1));
            assert_eq!(stderr, ["cannot start: missing configuration"]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(audit.names(), ["plugin.spawned", "plugin.crashed"]);
    let ev = one(&audit, "plugin.crashed");
    assert_eq!(ev.get("exit_code"), 1);
    assert_eq!(
        ev.get("last_stderr"),
        &serde_json::json!(["cannot start: missing configuration"])
    );
}

#[tokio::test]
async fn launch_failures_are_typed() {
    let (e, audit) = failing("not-executable", EASY).await;
    assert!(
        matches!(
            e,
            LaunchError::Spawn {
                source: SpawnError::NotExecutable { .. },
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(audit.names(), ["plugin.failed"]);
    let (e, _) = failing("missing-command", EASY).await;
    assert!(
        matches!(
            e,
            LaunchError::Spawn {
                source: SpawnError::NotFound { .. },
                ..
            }
        ),
        "{e:?}"
    );
    let (e, audit) = failing("no-such-plugin-dir", EASY).await;
    assert!(matches!(e, LaunchError::InvalidManifest { .. }), "{e:?}");
    assert_eq!(audit.names(), ["plugin.disabled"]);
}

#[tokio::test]
async fn the_spec_shell_plugin_pattern_works() {
    let (host, audit, _t) = host(EASY);
    let s = host
        .launch(&fixture("shell-adapter"))
        .await
        .expect("launch");
    let pid = s.pid().expect("pid");
    let v = s.call("status.get", None, None).await.expect("status.get");
    assert_eq!(v, serde_json::json!({"status": ""}));
    s.ping().await.expect("ping");
    assert!(s.shutdown().await.is_clean());
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.exited",
            "plugin.stopped"
        ]
    );
    assert_group_gone(pid);
}

#[tokio::test]
async fn a_lenient_session_can_drive_the_handshake_by_hand() {
    let (host, audit, transcript) = host(EASY);
    let s = host.launch_lenient(&fixture("good")).await.expect("spawn");
    let pid = s.pid().expect("pid");
    // The process is recorded when it starts (Spawn order), handshake or not.
    assert_eq!(audit.names(), ["plugin.spawned"]);
    let raw = s.raw();
    let params = serde_json::json!({"daemon_version": "x", "api_version": 1,
        "plugin_name": "good", "storage_available": false, "projects": []});
    let r = raw
        .request("initialize", Some(params), s.timeouts().initialize)
        .await
        .expect("initialize answered");
    assert_eq!(r["name"], "good");
    assert_eq!(s.phase(), kaged_host_core::Phase::InitializeSent);
    assert!(raw.send_line(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#));
    assert_eq!(s.phase(), kaged_host_core::Phase::Ready);
    let ctx = kaged_plugin_protocol::PluginCallContext::agent("music", "primary", "ses_1", "req_1");
    let v = s.call("good.echo", None, Some(ctx)).await.expect("call");
    assert!(v["context"]["request_id"].is_string());
    assert!(s.shutdown().await.is_clean());
    // The host never ran its own handshake: no plugin.initialized.
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.exited",
            "plugin.stopped"
        ]
    );
    assert_eq!(transcript.records()[0].msg["method"], "initialize");
    assert_group_gone(pid);
}

#[tokio::test]
async fn a_lenient_session_can_run_the_handshake_later() {
    let (host, audit, _t) = host(EASY);
    let s = host.launch_lenient(&fixture("good")).await.expect("spawn");
    let info = s.handshake().await.expect("handshake");
    assert_eq!(info.result.name, "good");
    // The handshake alone: the first config is the caller's to send.
    assert_eq!(audit.names(), ["plugin.spawned", "plugin.initialized"]);
    assert_eq!(s.first_config(), None);
    let sent = s
        .send_first_config(&kaged_host_core::FirstConfig::Defaults)
        .await
        .expect("sent");
    assert_eq!(sent.refused, None);
    assert_eq!(s.first_config(), Some(sent));
    assert!(s.shutdown().await.is_clean());
}
