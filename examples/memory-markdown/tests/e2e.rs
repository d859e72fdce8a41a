//! memory-markdown end to end, tools, storage and config: the real binary,
//! driven by the host simulator, with its store in a temporary directory.

mod common;

use common::{ctx, entries, launch, md_files};
use kaged_example_memory_markdown::entry::{Entry, Source};
use kaged_host_core::Direction;
use kaged_plugin_sdk::protocol::{parse_session_start_answer, PluginCallContext};
use serde_json::{json, Value};

#[tokio::test]
async fn retain_recall_forget_list_tags_round_trip() {
    let m = launch(json!({"tags": ["proj"]})).await;
    let c = ctx("music", "primary");
    let a = m
        .tool(
            "retain",
            json!({"content": "The deploy target is Cloudflare Workers", "tags": ["deploy"],
                                     "context": "CI fix"}),
            &c,
        )
        .await;
    let b = m
        .tool(
            "retain",
            json!({"content": "Deploy only on weekdays", "tags": ["deploy", "policy"]}),
            &c,
        )
        .await;
    m.tool("retain", json!({"content": "The cat is named Miso"}), &c)
        .await;
    assert_eq!(
        a["tags"],
        json!(["deploy", "proj"]),
        "configured tags are added"
    );
    assert!(
        a["file"]
            .as_str()
            .is_some_and(|f| f.starts_with("music/primary/")),
        "{a}"
    );

    let r = m
        .tool("recall", json!({"query": "cloudflare deploy"}), &c)
        .await;
    let hits = r["entries"].as_array().expect("entries");
    assert_eq!(hits.len(), 2, "{r}");
    assert_eq!(hits[0]["id"], a["id"]);
    assert_eq!(hits[1]["id"], b["id"]);
    assert_eq!(
        hits[0]["content"],
        "The deploy target is Cloudflare Workers"
    );
    assert_eq!(hits[0]["context"], "CI fix");
    assert_eq!(hits[0]["created_at"], a["created_at"]);
    assert!(hits[0]["score"].as_f64() > hits[1]["score"].as_f64(), "{r}");
    let by_tag = m
        .tool("recall", json!({"query": "*", "tags": ["policy"]}), &c)
        .await;
    assert_eq!(by_tag["entries"].as_array().map(Vec::len), Some(1));
    assert_eq!(by_tag["entries"][0]["id"], b["id"]);

    let tags = m.tool("list_tags", json!({}), &c).await;
    assert_eq!(
        tags["tags"],
        json!([{"tag": "proj", "count": 3}, {"tag": "deploy", "count": 2}, {"tag": "policy", "count": 1}])
    );
    assert_eq!(tags["entries"], 3);

    let gone = m.tool("forget", json!({"id": a["id"]}), &c).await;
    assert_eq!(gone, json!({"id": a["id"], "forgotten": true}));
    let r = m.tool("recall", json!({"query": "cloudflare"}), &c).await;
    assert_eq!(r["entries"], json!([]));
    let (code, msg) = m
        .tool_err("forget", json!({"id": a["id"]}), Some(c.clone()))
        .await;
    assert_eq!(code, -32010);
    assert!(msg.contains("entry_not_found"), "{msg}");
    let (code, msg) = m
        .tool_err("forget", json!({"id": "../../README"}), Some(c.clone()))
        .await;
    assert_eq!(code, -32602);
    assert!(msg.contains("/id"), "{msg}");
    let (code, _) = m
        .tool_err("retain", json!({"content": "  "}), Some(c.clone()))
        .await;
    assert_eq!(code, -32602);
    let (code, msg) = m
        .tool_err("recall", json!({"query": "x", "limit": 0}), Some(c))
        .await;
    assert_eq!(code, -32602, "schema-validated: {msg}");
    m.plugin.shutdown().await;
}

#[tokio::test]
async fn entries_are_markdown_files_with_frontmatter_and_a_readme() {
    let m = launch(json!({})).await;
    let a = m.tool("retain", json!({"content": "Prefers TypeScript strict mode\n\n- even in tests", "tags": ["style"],
                                     "context": "said \"always\""}), &ctx("music", "primary")).await;
    let dir = m.store().join("music").join("primary");
    let files = md_files(&dir);
    let id = a["id"].as_str().expect("id");
    assert_eq!(files, [dir.join(format!("{id}.md"))]);
    let text = std::fs::read_to_string(&files[0]).expect("read");
    assert!(
        text.starts_with(&format!("---\nid: \"{id}\"\ncreated_at: \"")),
        "{text}"
    );
    assert!(text.contains("\ntags: [\"style\"]\ncontext: \"said \\\"always\\\"\"\nsource: \"tool\"\n---\nPrefers TypeScript"), "{text}");
    let e = Entry::parse(&text).expect("parses");
    assert_eq!((e.id.as_str(), e.source), (id, Source::Tool));
    assert_eq!(
        e.content,
        "Prefers TypeScript strict mode\n\n- even in tests"
    );
    assert!(
        humantime::parse_rfc3339(&e.created_at).is_ok(),
        "{}",
        e.created_at
    );
    let readme =
        std::fs::read_to_string(m.store().join("README.md")).expect("README at the store root");
    assert!(readme.contains("memory-markdown"));
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .filter(|f| f.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "no temporary files: {leftovers:?}");
    m.plugin.shutdown().await;
}

#[tokio::test]
async fn agent_isolation_keeps_agents_apart() {
    let m = launch(json!({"isolation": "agent"})).await;
    let (primary, researcher) = (
        ctx("music", "primary"),
        ctx("music", "primary.subagents.researcher"),
    );
    m.tool("retain", json!({"content": "primary knows bun"}), &primary)
        .await;
    m.tool(
        "retain",
        json!({"content": "researcher knows deno"}),
        &researcher,
    )
    .await;
    let r = m.tool("recall", json!({"query": "*"}), &researcher).await;
    let contents: Vec<&Value> = r["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| &e["content"])
        .collect();
    assert_eq!(contents, [&json!("researcher knows deno")]);
    assert_eq!(md_files(&m.store().join("music").join("primary")).len(), 1);
    assert_eq!(
        md_files(&m.store().join("music").join("primary.subagents.researcher")).len(),
        1
    );
    let other_project = m
        .tool("recall", json!({"query": "bun"}), &ctx("films", "primary"))
        .await;
    assert_eq!(other_project["entries"], json!([]));
    m.plugin.shutdown().await;
}

#[tokio::test]
async fn project_isolation_shares_between_agents() {
    let m = launch(json!({"isolation": "project"})).await;
    let (primary, researcher) = (
        ctx("music", "primary"),
        ctx("music", "primary.subagents.researcher"),
    );
    m.tool("retain", json!({"content": "primary knows bun"}), &primary)
        .await;
    m.tool(
        "retain",
        json!({"content": "researcher knows deno"}),
        &researcher,
    )
    .await;
    let r = m
        .tool("recall", json!({"query": "knows"}), &researcher)
        .await;
    assert_eq!(r["entries"].as_array().map(Vec::len), Some(2), "{r}");
    assert_eq!(md_files(&m.store().join("music").join("_project")).len(), 2);
    assert!(!m.store().join("music").join("primary").exists());
    let start = m.hook("on_session_start", json!({}), &primary).await;
    let inject = parse_session_start_answer(&start)
        .expect("valid")
        .expect("an inject");
    assert!(
        inject.starts_with("Known about this project:\n"),
        "{inject}"
    );
    m.plugin.shutdown().await;
}

#[tokio::test]
async fn traversal_in_context_is_refused_and_daemon_calls_are_not_applicable() {
    let m = launch(json!({})).await;
    for (project, agent) in [
        ("music", "../../escape"),
        ("..", "primary"),
        ("/etc", "primary"),
        ("music", "a/b"),
        ("music", "_project"),
    ] {
        let (code, msg) = m
            .tool_err("retain", json!({"content": "x"}), Some(ctx(project, agent)))
            .await;
        assert_eq!(code, -32602, "{project} {agent}: {msg}");
        let e = m
            .plugin
            .call(
                "kaged.hook.on_session_idle",
                Some(json!({"transcript": "user: x"})),
                Some(ctx(project, agent)),
            )
            .await
            .expect_err("refused");
        assert_eq!(e.code(), -32602);
    }
    let names: Vec<_> = std::fs::read_dir(m.tmp.path())
        .expect("tmp")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        names.iter().all(|n| n == "memory"),
        "nothing outside the store: {names:?}"
    );
    // The host made the granted directory; nothing was written in it.
    let written = std::fs::read_dir(m.store()).map_or(0, |d| d.count());
    assert_eq!(written, 0, "no entry (nor README) was written");
    // kaged-host-sim refuses a tool call without an agent context before
    // sending it (ADR-0023); a host that sends one anyway gets -32006.
    let (code, _) = m.tool_err("recall", json!({"query": "x"}), None).await;
    assert_eq!(code, -32602, "the host refuses it");
    let daemon = serde_json::to_value(PluginCallContext::daemon("req_raw")).expect("context");
    let raw = m
        .plugin
        .raw()
        .request(
            "memory-markdown.recall",
            Some(json!({"query": "x", "_context": daemon})),
            std::time::Duration::from_secs(10),
        )
        .await;
    match raw {
        Err(kaged_host_core::RequestError::Rpc(e)) => {
            assert_eq!(e.code, -32006, "{}", e.message)
        }
        other => panic!("expected -32006 not_applicable, got {other:?}"),
    }
    m.plugin.shutdown().await;
}

#[tokio::test]
async fn invalid_config_is_refused_naming_the_field() {
    let m = launch(json!({"recent_on_start": 1})).await;
    for (config, field) in [
        (json!({"retain_every_n_turns": 0}), "retain_every_n_turns"),
        (json!({"recent_on_start": "lots"}), "recent_on_start"),
        (json!({"isolation": "team"}), "isolation"),
        (json!({"store": "relative/dir"}), "store"),
        (json!({"colour": "red"}), "colour"),
        (json!({"redact_secrets": "tok_secret_1"}), "redact_secrets"),
    ] {
        let (code, msg) = m.configure(config.clone()).await.expect_err("refused");
        assert_eq!(code, -32004, "{config}");
        assert!(msg.contains(field), "{config}: {msg}");
        assert!(
            !msg.contains("tok_secret_1"),
            "a secret is never echoed: {msg}"
        );
    }
    let c = ctx("music", "primary");
    m.tool("retain", json!({"content": "still configured"}), &c)
        .await;
    assert_eq!(
        md_files(&m.store().join("music").join("primary")).len(),
        1,
        "the previous config stays"
    );
    m.plugin.shutdown().await;
}

#[tokio::test]
async fn the_default_store_is_config_memory_under_the_hosts_config_root() {
    // The host gives its config root as KAGED_CONFIG_ROOT, and the manifest
    // grants `config:/memory` there (HOME, the plugin dir, is read-only).
    let m = launch(json!({})).await;
    let a = m
        .tool(
            "retain",
            json!({"content": "default store"}),
            &ctx("music", "primary"),
        )
        .await;
    let root = m.tmp.path().canonicalize().expect("config root");
    let file = root
        .join("memory/music/primary")
        .join(format!("{}.md", a["id"].as_str().unwrap_or("")));
    assert!(file.is_file(), "under the config root: {}", file.display());
    let home = m.staged.dir().canonicalize().expect("plugin dir");
    assert!(!home.join(".config").exists(), "nothing in HOME");
    m.plugin.shutdown().await;
}

#[tokio::test]
async fn secrets_are_redacted_from_files_and_never_logged() {
    let m = launch(json!({"redact_secrets": ["tok_9f8e7d"], "retain_every_n_turns": 1})).await;
    let c = ctx("music", "primary");
    m.tool(
        "retain",
        json!({"content": "The staging token is tok_9f8e7d", "context": "tok_9f8e7d"}),
        &c,
    )
    .await;
    m.hook(
        "on_session_idle",
        json!({"transcript": "user: use tok_9f8e7d"}),
        &c,
    )
    .await;
    m.plugin.shutdown().await;
    for e in entries(&m.store().join("music").join("primary")) {
        assert!(
            !e.content.contains("tok_9f8e7d") && e.content.contains("[redacted]"),
            "{e:?}"
        );
        assert!(e.context.iter().all(|c| !c.contains("tok_9f8e7d")));
    }
    let stderr: Vec<String> = m
        .transcript
        .records()
        .iter()
        .filter(|r| r.dir == Direction::PluginStderr)
        .map(|r| r.msg.to_string())
        .collect();
    assert!(
        stderr.iter().any(|l| l.contains("configured")),
        "the config is logged: {stderr:?}"
    );
    assert!(
        stderr.iter().all(|l| !l.contains("tok_9f8e7d")),
        "{stderr:?}"
    );
}
