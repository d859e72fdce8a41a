//! memory-markdown end to end, the four lifecycle hooks: the real binary,
//! driven by the host simulator, with its store in a temporary directory.

mod common;

use common::{ctx, entries, launch, md_files};
use kaged_example_memory_markdown::entry::Source;
use kaged_plugin_sdk::protocol::{
    parse_observer_answer, parse_session_start_answer, wrap_inject, PluginCallContext,
};
use serde_json::{json, Value};

#[tokio::test]
async fn session_start_injects_recent_entries_or_nothing() {
    let m = launch(json!({"recent_on_start": 2})).await;
    let c = ctx("music", "primary");
    let empty = m.hook("on_session_start", json!({}), &c).await;
    assert_eq!(parse_session_start_answer(&empty), Ok(None), "{empty}");
    for fact in [
        "Uses bun 1.x",
        "Prefers ESM imports",
        "Deploys to Cloudflare",
    ] {
        m.tool("retain", json!({"content": fact}), &c).await;
    }
    let start = m.hook("on_session_start", json!({}), &c).await;
    let inject = parse_session_start_answer(&start)
        .expect("valid")
        .expect("an inject");
    assert_eq!(
        inject,
        "Known about this agent:\n- Deploys to Cloudflare\n- Prefers ESM imports\n(1 more in memory: search with memory-markdown.recall)"
    );
    let wrapped = wrap_inject("memory-markdown", &inject).expect("wrapped by the host");
    assert!(wrapped.starts_with("<plugin:memory-markdown>\nKnown about this agent:"));
    m.plugin.shutdown().await;
}

fn messages() -> Value {
    json!([
        {"id": "m1", "role": "user", "content": "We deploy with wrangler."},
        {"id": "m2", "role": "assistant", "content": "Noted: wrangler deploys."}
    ])
}

#[tokio::test]
async fn idle_transcripts_are_saved_as_arrays_and_as_plain_strings() {
    let m = launch(json!({"retain_every_n_turns": 1})).await;
    let c = ctx("music", "primary");
    assert_eq!(
        m.hook("on_session_idle", json!({"transcript": messages()}), &c)
            .await,
        Value::Null
    );
    m.hook(
        "on_session_idle",
        json!({"transcript": "user: older host text\nassistant: ok"}),
        &c,
    )
    .await;
    let saved = entries(&m.store().join("music").join("primary"));
    assert_eq!(saved.len(), 2);
    assert!(
        saved
            .iter()
            .all(|e| e.source == Source::Transcript && e.tags == ["transcript"]),
        "{saved:?}"
    );
    assert_eq!(
        saved[0].content,
        "**user**: We deploy with wrangler.\n\n**assistant**: Noted: wrangler deploys."
    );
    assert_eq!(saved[1].content, "user: older host text\nassistant: ok");
    assert_eq!(
        saved[0].context.as_deref(),
        Some("transcript of session ses_1")
    );
    let r = m
        .tool(
            "recall",
            json!({"query": "wrangler", "tags": ["transcript"]}),
            &c,
        )
        .await;
    assert_eq!(r["entries"].as_array().map(Vec::len), Some(1));
    m.plugin.shutdown().await;
}

#[tokio::test]
async fn idle_transcripts_wait_for_n_user_turns_and_are_flushed_at_shutdown() {
    let m = launch(json!({"retain_every_n_turns": 2})).await;
    let c = ctx("music", "primary");
    let dir = m.store().join("music").join("primary");
    m.hook("on_session_idle", json!({"transcript": messages()}), &c)
        .await;
    assert!(md_files(&dir).is_empty(), "one user turn of two");
    let more = json!([{"id": "m3", "role": "user", "content": "And staging?"}]);
    m.hook("on_session_idle", json!({"transcript": more}), &c)
        .await;
    let saved = entries(&dir);
    assert_eq!(saved.len(), 1);
    assert!(
        saved[0].content.contains("wrangler")
            && saved[0].content.ends_with("**user**: And staging?")
    );
    let last = json!([{"id": "m4", "role": "user", "content": "Buffered until shutdown"}]);
    m.hook("on_session_idle", json!({"transcript": last}), &c)
        .await;
    assert_eq!(md_files(&dir).len(), 1);
    assert!(m.plugin.shutdown().await.is_clean());
    let saved = entries(&dir);
    assert_eq!(
        saved.len(),
        2,
        "the shutdown handler saved the buffered turn"
    );
    assert_eq!(saved[1].content, "**user**: Buffered until shutdown");
}

fn compact_params(role: &str) -> Value {
    json!({
        "role": role,
        "messages_being_compacted": [
            {"id": "m1", "role": "system", "content": "You are helpful.", "always_keep": true},
            {"id": "m2", "role": "user", "content": "Our API lives at api.example.com"},
            {"id": "m3", "role": "assistant", "content": "Got it."}
        ],
        "messages_remaining": [{"id": "m4", "role": "user", "content": "Next?"}],
        "strategy": "summarize",
        "trigger": "threshold_crossed"
    })
}

#[tokio::test]
async fn post_compact_saves_the_compacted_messages() {
    let m = launch(json!({})).await;
    let c = ctx("music", "primary");
    let answer = m.hook("post_compact", compact_params("observer"), &c).await;
    let observed = parse_observer_answer(&answer)
        .expect("an observer answer")
        .expect("not empty");
    let saved = entries(&m.store().join("music").join("primary"));
    assert_eq!(saved.len(), 1);
    let e = &saved[0];
    assert_eq!(
        (e.source, e.tags.as_slice()),
        (Source::Compaction, &["compaction".to_string()][..])
    );
    assert_eq!(
        e.content,
        "**user**: Our API lives at api.example.com\n\n**assistant**: Got it."
    );
    assert!(
        !e.content.contains("You are helpful"),
        "always-keep messages stay in context"
    );
    let retain = observed.retain.expect("retain");
    assert!(retain.len() == 1 && retain[0].contains(&e.id), "{retain:?}");
    m.plugin.shutdown().await;
}

#[tokio::test]
async fn pre_compact_observes_with_retain_hints_from_the_session() {
    let m = launch(json!({})).await;
    let c = ctx("music", "primary");
    let none = m.hook("pre_compact", compact_params("observer"), &c).await;
    assert_eq!(parse_observer_answer(&none), Ok(None));
    m.tool(
        "retain",
        json!({"content": "Staging is at staging.example.com\nmore detail"}),
        &c,
    )
    .await;
    let hints = m.hook("pre_compact", compact_params("observer"), &c).await;
    let observed = parse_observer_answer(&hints)
        .expect("valid")
        .expect("hints");
    assert_eq!(
        observed.retain,
        Some(vec!["Staging is at staging.example.com".to_string()])
    );
    let other_session = PluginCallContext::agent("music", "primary", "ses_2", "req_2");
    let none = m
        .hook("pre_compact", compact_params("observer"), &other_session)
        .await;
    assert_eq!(parse_observer_answer(&none), Ok(None));
    m.plugin.shutdown().await;
}
