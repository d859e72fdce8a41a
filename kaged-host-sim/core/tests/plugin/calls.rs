//! Method calls: context passing, declared-method refusal, concurrency,
//! plugin-to-host requests, notifications, hooks, timeouts, crashes.

use crate::support::host::{assert_group_gone, fixture, host, host_with, one, EASY, LIMIT, SHORT};
use kaged_host_core::{AuditEvent, CallError, HostSim, Timeouts};
use kaged_host_storage::BrokerHandler;
use kaged_plugin_protocol::PluginCallContext;
use serde_json::json;

#[tokio::test]
async fn tool_call_carries_the_context_and_is_audited() {
    let (host, audit, _t) = host(EASY);
    let s = host.launch(&fixture("good")).await.expect("launch");
    let ctx = PluginCallContext::agent("music", "primary", "ses_1", "req_42");
    let v = s
        .call("good.echo", Some(json!({"text": "hi"})), Some(ctx.clone()))
        .await
        .expect("call");
    assert_eq!(v["echo"], json!({"text": "hi"}));
    assert_eq!(v["context"], serde_json::to_value(&ctx).expect("ctx json"));
    let called = one(&audit, "plugin.method_called");
    assert_eq!(called.get("method"), "good.echo");
    assert_eq!(called.get("request_id"), "req_42");
    assert_eq!(called.get("user_id"), "operator");
    assert_eq!(called.get("project"), "music");
    let returned = one(&audit, "plugin.method_returned");
    assert_eq!(returned.get("success"), true);
    assert!(returned.get("duration_ms").is_u64());
    s.shutdown().await;
}

#[tokio::test]
async fn a_call_without_context_gets_a_daemon_level_one() {
    let (host, _audit, _t) = host(EASY);
    let s = host.launch(&fixture("good")).await.expect("launch");
    let v = s.call("status.get", None, None).await.expect("call");
    let ctx: PluginCallContext = serde_json::from_value(v["context"].clone()).expect("context");
    assert!(ctx.project_id.is_none() && ctx.agent_path.is_none() && ctx.session_id.is_none());
    assert!(!ctx.request_id.is_empty());
    s.shutdown().await;
}

#[tokio::test]
async fn a_tool_needs_an_agent_context_and_is_refused_without_one() {
    let (host, audit, transcript) = host(EASY);
    let s = host.launch(&fixture("good")).await.expect("launch");
    let before = transcript.records().len();
    for ctx in [None, Some(PluginCallContext::daemon("req_daemon"))] {
        let e = s.call("good.echo", None, ctx).await.unwrap_err();
        assert!(
            matches!(e, CallError::ToolNeedsAgentContext { .. }),
            "{e:?}"
        );
        assert_eq!(e.code(), -32602);
    }
    assert_eq!(transcript.records().len(), before, "nothing was sent");
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

#[tokio::test]
async fn undeclared_methods_and_partial_contexts_are_refused_before_sending() {
    let (host, audit, transcript) = host(EASY);
    let s = host.launch(&fixture("good")).await.expect("launch");
    let before = transcript.records().len();
    let e = s.call("not.declared", None, None).await.unwrap_err();
    assert!(matches!(e, CallError::NotDeclared { .. }));
    assert_eq!(e.code(), -32601);
    // A hook the manifest does not subscribe to is not callable either.
    let e = s
        .call("kaged.hook.pre_compact", None, None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), -32601);
    let mut partial = PluginCallContext::agent("music", "primary", "ses_1", "r");
    partial.agent_path = None;
    let e = s.call("good.echo", None, Some(partial)).await.unwrap_err();
    assert!(matches!(e, CallError::PartialContext { .. }), "{e:?}");
    assert_eq!(e.code(), -32602);
    let agent = PluginCallContext::agent("music", "primary", "ses_1", "r");
    let e = s
        .call("good.echo", Some(json!([1, 2])), Some(agent))
        .await
        .unwrap_err();
    assert!(matches!(e, CallError::ParamsNotObject { .. }));
    // Nothing reached the wire, nothing was audited.
    assert_eq!(transcript.records().len(), before);
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

#[tokio::test]
async fn ten_concurrent_calls_all_get_their_own_answers() {
    let (host, _audit, _t) = host(EASY);
    let s = host.launch(&fixture("good")).await.expect("launch");
    // Later calls answer first: answers arrive out of order.
    let calls = (0..10u64).map(|n| {
        s.call(
            "delay.echo",
            Some(json!({"n": n, "ms": (10 - n) * 15})),
            None,
        )
    });
    let results = futures_util::future::join_all(calls).await;
    for (n, r) in results.into_iter().enumerate() {
        assert_eq!(r.expect("answer")["n"], n as u64);
    }
    s.shutdown().await;
}

/// The host's own request ids reach the wire strictly increasing under a
/// load of concurrent calls and pings from many tasks on many threads: an
/// id is taken and its line queued under one lock (ADDENDUM §16). On the
/// old code (the id taken by `fetch_add`, the line queued later) ids come
/// out of order here.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn request_ids_on_the_wire_increase_strictly_under_concurrent_calls_and_pings() {
    let (host, _audit, transcript) = host(EASY);
    let s = std::sync::Arc::new(host.launch(&fixture("good")).await.expect("launch"));
    let tasks: Vec<_> = (0..8u64)
        .map(|t| {
            let s = s.clone();
            tokio::spawn(async move {
                for n in 0..100u64 {
                    if n % 2 == 0 {
                        s.ping().await.expect("ping");
                    } else {
                        let v = s
                            .call(
                                "delay.echo",
                                Some(json!({"n": t * 1000 + n, "ms": 0})),
                                None,
                            )
                            .await
                            .expect("call");
                        assert_eq!(v["n"], t * 1000 + n);
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("the task");
    }
    let ids: Vec<u64> = transcript
        .records()
        .iter()
        .filter(|r| r.dir == kaged_host_core::Direction::HostToPlugin)
        .filter_map(|r| r.msg.get("id").and_then(serde_json::Value::as_u64))
        .collect();
    assert!(ids.len() >= 800, "{} requests", ids.len());
    let out_of_order: Vec<(u64, u64)> = ids
        .windows(2)
        .filter(|w| w[1] <= w[0])
        .map(|w| (w[0], w[1]))
        .collect();
    assert!(
        out_of_order.is_empty(),
        "ids out of order on the wire: {out_of_order:?}"
    );
    if let Ok(s) = std::sync::Arc::try_unwrap(s) {
        s.shutdown().await;
    }
}

/// ADDENDUM §16: request ids on audit records are unique per daemon run,
/// never reset when a plugin restarts: a second process of the same
/// plugin, launched by the same host, goes on where the first stopped.
#[tokio::test]
async fn request_ids_are_unique_per_run_across_a_restart() {
    let (host, audit, _t) = host(EASY);
    let ids = |audit: &kaged_host_core::AuditLog| -> Vec<String> {
        audit
            .events()
            .into_iter()
            .filter(|r| r.event == AuditEvent::MethodCalled && r.get("method") == "env.get")
            .map(|r| r.get("request_id").as_str().unwrap_or_default().to_string())
            .collect()
    };
    for _ in 0..2 {
        let s = host.launch(&fixture("good")).await.expect("launch");
        s.call("env.get", None, None).await.expect("call");
        s.shutdown().await;
    }
    let seen = ids(&audit);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_ne!(seen[0], seen[1], "a restart does not reset the sequence");
    assert!(
        seen.iter().all(|id| id.starts_with("req_good_")),
        "{seen:?}"
    );
}

#[tokio::test]
async fn plugin_to_host_storage_request_is_answered_during_a_call() {
    // Storage said available, but no broker: the default handler answers.
    let (host, audit, _t) = host(EASY);
    let host = HostSim::new(host.config().clone().with_storage_available(true));
    let s = host.launch(&fixture("good")).await.expect("launch");
    let v = s.call("storage.try", None, None).await.expect("call");
    assert_eq!(v["host_answer"]["id"], 1);
    assert_eq!(v["host_answer"]["error"]["code"], -32003);
    assert_eq!(
        v["host_answer"]["error"]["message"],
        "storage not available"
    );
    let denied = audit.of(AuditEvent::StorageDenied);
    assert_eq!(denied.len(), 1, "{denied:?}");
    assert_eq!(denied[0].data["reason"], "storage_unavailable");
    s.shutdown().await;
}

#[tokio::test]
async fn storage_requests_get_a_clear_error_when_initialize_said_unavailable() {
    // The default host config says `storage_available: false`.
    let (host, audit, _t) = host(EASY);
    let s = host.launch(&fixture("good")).await.expect("launch");
    let v = s.call("storage.try", None, None).await.expect("call");
    assert_eq!(v["host_answer"]["error"]["code"], -32003);
    assert_eq!(
        v["host_answer"]["error"]["message"],
        "storage is not available: the host said storage_available: false in initialize"
    );
    // ADDENDUM §15: every denial is audited, this one included.
    let denied = audit.of(AuditEvent::StorageDenied);
    assert_eq!(denied.len(), 1, "{denied:?}");
    assert_eq!(denied[0].data["reason"], "storage_unavailable");
    assert_eq!(denied[0].data["method"], "kaged.storage.query");
    assert_eq!(denied[0].data["sql"], "<8 bytes of SQL>");
    s.shutdown().await;
}

#[tokio::test]
async fn a_broker_refusing_for_storage_available_false_audits_the_redacted_sql() {
    let (host, audit, _t) = host(EASY);
    let broker = std::sync::Arc::new(BrokerHandler::temp().expect("a broker"));
    let config = host.config().clone().with_storage(broker);
    let host = HostSim::new(config.with_storage_available(false));
    let s = host.launch(&fixture("good")).await.expect("launch");
    let v = s.call("storage.try", None, None).await.expect("call");
    assert_eq!(v["host_answer"]["error"]["code"], -32003);
    let denied = audit.of(AuditEvent::StorageDenied);
    assert_eq!(denied.len(), 1, "{denied:?}");
    assert_eq!(denied[0].data["reason"], "storage_unavailable");
    assert_eq!(denied[0].data["sql"], "SELECT ?");
    s.shutdown().await;
}

#[tokio::test]
async fn notifications_are_audited_and_delivered() {
    let (host, audit, _t) = host(EASY);
    let s = host.launch(&fixture("good")).await.expect("launch");
    let mut rx = s.notifications();
    s.call("notify.emit", Some(json!({"n": 7})), None)
        .await
        .expect("call");
    let n = tokio::time::timeout(LIMIT, rx.recv())
        .await
        .expect("in time")
        .expect("note");
    assert_eq!(n.method, "echo.done");
    assert_eq!(n.params, Some(json!({"n": 7})));
    assert_eq!(
        one(&audit, "plugin.notification").get("notification_type"),
        "echo.done"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn hooks_need_an_agent_context_and_are_audited_as_hooks() {
    let (host, audit, _t) = host(EASY);
    let s = host.launch(&fixture("good")).await.expect("launch");
    let e = s
        .call("kaged.hook.on_session_start", None, None)
        .await
        .unwrap_err();
    assert!(matches!(e, CallError::HookNeedsAgentContext { .. }));
    let ctx = PluginCallContext::agent("music", "primary", "ses_1", "req_h");
    let v = s
        .call("kaged.hook.on_session_start", None, Some(ctx))
        .await
        .expect("hook");
    assert_eq!(v["inject"], "hello from good");
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.hook.fired",
            "plugin.hook.returned"
        ]
    );
    assert_eq!(one(&audit, "plugin.hook.returned").get("has_result"), true);
    s.ping().await.expect("ping");
    s.shutdown().await;
}

#[tokio::test]
async fn a_hung_method_times_out_with_32603_and_the_plugin_is_killed() {
    // The request timeout is waited out; the start keeps its spec budget.
    let (host, audit, _t) = host_with(|t| Timeouts {
        request: SHORT,
        ..t
    });
    let s = host
        .launch(&fixture("never-answers-a-method"))
        .await
        .expect("launch");
    let pid = s.pid().expect("pid");
    let e = s.call("hang.forever", None, None).await.unwrap_err();
    assert!(matches!(e, CallError::Timeout { .. }), "{e:?}");
    assert_eq!(e.rpc_error().code, -32603);
    assert_eq!(
        audit.names(),
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.killed"
        ]
    );
    assert_eq!(one(&audit, "plugin.method_returned").get("success"), false);
    assert_eq!(
        one(&audit, "plugin.killed").get("reason"),
        "request_timeout"
    );
    assert_group_gone(pid);
    // The dead plugin answers nothing more.
    let e = s.call("status.get", None, None).await.unwrap_err();
    assert!(matches!(e, CallError::Closed { .. }), "{e:?}");
}

#[tokio::test]
async fn a_crash_during_a_call_fails_the_call_and_is_audited_with_stderr() {
    let (host, audit, transcript) = host(EASY);
    let s = host
        .launch(&fixture("crashes-on-call"))
        .await
        .expect("launch");
    let pid = s.pid().expect("pid");
    let e = s.call("crash.now", None, None).await.unwrap_err();
    assert!(matches!(e, CallError::Closed { .. }), "{e:?}");
    let exit = s.wait_exit(LIMIT).await.expect("exit");
    assert_eq!(exit.code, Some(3));
    let crashed = one(&audit, "plugin.crashed");
    assert_eq!(crashed.get("exit_code"), 3);
    assert!(crashed.get("signal").is_null());
    assert_eq!(
        crashed.get("last_stderr"),
        &json!([
            "fatal: crash line 0",
            "fatal: crash line 1",
            "fatal: crash line 2"
        ])
    );
    assert_eq!(crashed.get("pid"), pid);
    assert!(!audit.names().contains(&"plugin.killed"));
    // stderr lines are in the transcript, as raw strings.
    let stderr: Vec<_> = transcript
        .records()
        .into_iter()
        .filter(|r| r.dir == kaged_host_core::Direction::PluginStderr)
        .map(|r| r.msg)
        .collect();
    assert_eq!(stderr.len(), 3);
    assert_eq!(stderr[0], json!("fatal: crash line 0"));
    assert_group_gone(pid);
    assert_eq!(
        s.shutdown().await,
        kaged_host_core::ShutdownOutcome::AlreadyEnded
    );
}

#[tokio::test]
async fn a_crash_audit_keeps_the_last_50_stderr_lines_in_order() {
    // At the spec's own times: the crash audit waits up to the 2 s grace for
    // stderr to reach its end, ample for 120 lines on a loaded machine.
    let (host, audit, _t) = host(1.0);
    let s = host
        .launch(&fixture("crashes-with-long-stderr"))
        .await
        .expect("launch");
    let e = s.call("crash.now", None, None).await.unwrap_err();
    assert!(matches!(e, CallError::Closed { .. }), "{e:?}");
    assert_eq!(s.wait_exit(LIMIT).await.expect("exit").code, Some(3));
    let kept: Vec<String> = (71..=120).map(|n| format!("stderr line {n}")).collect();
    assert_eq!(
        one(&audit, "plugin.crashed").get("last_stderr"),
        &json!(kept)
    );
    assert_eq!(s.stderr_tail(), kept);
}

#[tokio::test]
async fn the_manifest_env_overrides_daemon_defaults_but_not_daemon_variables() {
    let (host, _audit, _t) = host(EASY);
    let dir = fixture("env-override");
    let s = host.launch(&dir).await.expect("launch");
    let env = s.call("env.get", None, None).await.expect("env.get");
    let abs = std::fs::canonicalize(&dir).expect("canonical dir");
    let abs = abs.to_string_lossy();
    // Daemon defaults give way to the manifest's env block ...
    assert_eq!(env["PATH"], "/opt/env-override/bin:/usr/bin");
    assert_eq!(env["LANG"], "en_US.UTF-8");
    // ... the defaults it does not name stay ...
    assert_eq!(env["HOME"], *abs);
    assert_eq!(env["KAGED_LOG_LEVEL"], "info");
    // ... and the three daemon-controlled variables cannot be overridden.
    assert_eq!(env["KAGED_PLUGIN_NAME"], "env-override");
    assert_eq!(env["KAGED_PLUGIN_DIR"], *abs);
    assert_eq!(env["KAGED_API_VERSION"], "1");
    s.shutdown().await;
}

#[tokio::test]
async fn the_plugin_runs_with_the_spawn_environment() {
    let (host, _audit, _t) = host(EASY);
    let dir = fixture("good");
    let s = host.launch(&dir).await.expect("launch");
    let v = s.call("env.get", None, None).await.expect("env.get");
    let abs = std::fs::canonicalize(&dir).expect("canonical dir");
    let abs = abs.to_string_lossy();
    let env = &v["env"];
    // Daemon-controlled variables win over the manifest's env block.
    assert_eq!(env["KAGED_PLUGIN_NAME"], "good");
    assert_eq!(env["KAGED_API_VERSION"], "1");
    assert_eq!(env["KAGED_PLUGIN_DIR"], *abs);
    assert_eq!(env["KAGED_LOG_LEVEL"], "info");
    assert_eq!(env["HOME"], *abs);
    assert_eq!(env["PATH"], "/usr/bin:/usr/local/bin");
    assert_eq!(env["LANG"], "C.UTF-8");
    assert_eq!(env["GOOD_FLAG"], "yes");
    // cwd is the plugin directory; nothing of the host's environment leaks.
    assert_eq!(v["cwd"], *abs);
    let keys: Vec<&str> = v["all_keys"]
        .as_array()
        .expect("keys")
        .iter()
        .filter_map(|k| k.as_str())
        .filter(|k| *k != "LC_CTYPE") // set by python itself under C.UTF-8
        // bwrap sets PWD to the working directory (`--chdir`), always.
        .filter(|k| !(s.caged() && *k == "PWD"))
        .collect();
    assert_eq!(
        keys,
        [
            "GOOD_FLAG",
            "HOME",
            "KAGED_API_VERSION",
            "KAGED_LOG_LEVEL",
            "KAGED_PLUGIN_DIR",
            "KAGED_PLUGIN_NAME",
            "LANG",
            "PATH"
        ]
    );
    s.shutdown().await;
}
