//! summarizing-compactor end to end: the real binary under the host
//! simulator, answers checked with the SDK's `validate_compactor_result`
//! (the function the host uses).

use std::path::PathBuf;

use kaged_host_core::testing::StagedPlugin;
use kaged_host_core::{HostConfig, HostSim, PluginHandle, TimeScale};
use kaged_plugin_sdk::protocol::{
    parse_observer_answer, validate_compactor_result, CompactParams, MessageRole, PluginCallContext,
};
use serde_json::{json, Value};

async fn launch() -> (StagedPlugin, PluginHandle) {
    let staged = StagedPlugin::new(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        env!("CARGO_BIN_EXE_summarizing-compactor"),
    )
    .expect("stage");
    let host =
        HostSim::new(HostConfig::default().with_time_scale(TimeScale::new(0.5).expect("scale")));
    let plugin = host.launch(staged.dir()).await.expect("launch");
    (staged, plugin)
}

fn ctx() -> PluginCallContext {
    PluginCallContext::agent("music", "primary", "ses_1", "req_7")
}

/// Always-keep messages in both lists, a tool result with extra fields.
fn params(role: &str) -> Value {
    json!({
        "role": role,
        "messages_being_compacted": [
            {"id": "m1", "role": "system", "content": "You are a careful deployer.", "always_keep": true},
            {"id": "m2", "role": "user", "content": "How do we deploy? It has to be today."},
            {"id": "m3", "role": "assistant", "content": "Use wrangler publish. Then check the logs."},
            {"id": "m4", "role": "user", "content": "Remember: never deploy on Fridays.", "always_keep": true},
            {"id": "m5", "role": "tool", "content": "exit 0\nall good", "tokens": 12},
            {"id": "m6", "role": "user", "content": "And staging?"},
            {"id": "m7", "role": "assistant", "content": "Staging uses the same command."}
        ],
        "messages_remaining": [
            {"id": "m8", "role": "user", "content": "Thanks.", "always_keep": true},
            {"id": "m9", "role": "assistant", "content": "You're welcome."}
        ],
        "strategy": "summarize",
        "trigger": "threshold_crossed"
    })
}

async fn pre_compact(plugin: &PluginHandle, p: &Value) -> Value {
    plugin
        .call("kaged.hook.pre_compact", Some(p.clone()), Some(ctx()))
        .await
        .expect("pre_compact")
}

fn typed(p: &Value) -> CompactParams {
    let mut p = p.clone();
    p["_context"] = serde_json::to_value(ctx()).expect("context");
    serde_json::from_value(p).expect("CompactParams")
}

#[tokio::test]
async fn the_compactor_answer_is_valid_and_keeps_always_keep_messages_in_place() {
    let (_staged, plugin) = launch().await;
    let p = params("compactor");
    let answer = pre_compact(&plugin, &p).await;
    let result = validate_compactor_result(&typed(&p), &answer).expect("a valid CompactorResult");
    let ids: Vec<&str> = result.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids,
        ["m1", "summary_req_7", "m4", "m6", "m7", "m8", "m9"],
        "keep_last_n = 2 by default"
    );
    assert_eq!(result.superseded, ["m2", "m3", "m5"]);
    let summary = &result.messages[1];
    assert_eq!(summary.role, MessageRole::System);
    assert_eq!(
        summary.content,
        "[Summary of 3 earlier messages: 1 user, 1 assistant, 1 tool]\n- user: How do we deploy?\n- assistant: Use wrangler publish.\n- tool: exit 0"
    );
    assert!(
        result
            .summary
            .as_deref()
            .is_some_and(|s| s.starts_with("Summarised 3 of 7")),
        "{:?}",
        result.summary
    );
    assert_eq!(
        answer["messages"][0]["always_keep"], true,
        "kept messages are unchanged"
    );
    plugin.shutdown().await;
}

#[tokio::test]
async fn config_changes_what_is_summarised_and_bad_config_is_refused() {
    let (_staged, plugin) = launch().await;
    let ok = plugin
        .call(
            "config.update",
            Some(json!({"keep_last_n": 0, "max_summary_chars": 200})),
            None,
        )
        .await;
    assert_eq!(ok.expect("config"), json!({"status": "ok"}));
    let p = params("compactor");
    let answer = pre_compact(&plugin, &p).await;
    let result = validate_compactor_result(&typed(&p), &answer).expect("valid");
    assert_eq!(result.superseded, ["m2", "m3", "m5", "m6", "m7"]);
    assert!(result.messages[1].content.chars().count() <= 200);
    for (config, field) in [
        (json!({"keep_last_n": 99}), "keep_last_n"),
        (json!({"max_summary_chars": "x"}), "max_summary_chars"),
        (json!({"style": "terse"}), "style"),
    ] {
        let e = plugin
            .call("config.update", Some(config), None)
            .await
            .expect_err("refused");
        assert_eq!(e.code(), -32004);
        assert!(
            e.rpc_error().message.contains(field),
            "{}",
            e.rpc_error().message
        );
    }
    plugin.shutdown().await;
}

#[tokio::test]
async fn nothing_to_summarise_still_answers_a_valid_result() {
    let (_staged, plugin) = launch().await;
    let p = json!({"role": "compactor", "strategy": "summarize", "trigger": "manual",
        "messages_being_compacted": [{"id": "a", "role": "user", "content": "pinned", "always_keep": true}],
        "messages_remaining": []});
    let answer = pre_compact(&plugin, &p).await;
    let result = validate_compactor_result(&typed(&p), &answer).expect("valid");
    assert!(result.superseded.is_empty());
    assert_eq!(result.messages.len(), 1);
    plugin.shutdown().await;
}

#[tokio::test]
async fn as_an_observer_it_answers_observer_results() {
    let (_staged, plugin) = launch().await;
    let pre = pre_compact(&plugin, &params("observer")).await;
    assert_eq!(parse_observer_answer(&pre), Ok(None));
    let post = plugin
        .call(
            "kaged.hook.post_compact",
            Some(params("observer")),
            Some(ctx()),
        )
        .await
        .expect("post_compact");
    let observed = parse_observer_answer(&post)
        .expect("an observer answer")
        .expect("hints");
    assert_eq!(
        observed.retain,
        Some(vec![
            "user asked: How do we deploy?".to_string(),
            "user asked: And staging?".to_string()
        ])
    );
    assert_eq!(observed.inject, None);
    plugin.shutdown().await;
}
