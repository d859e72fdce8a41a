//! `#[kaged_plugin]` end to end over an in-process pipe: the generated
//! builder calls route methods, tools, hooks, config and shutdown to the
//! author's `async fn`s, and the manifest follows from the code.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use kaged_plugin_sdk::protocol::{
    CompactParams, CompactorResult, PluginCallContext, PluginRole, SessionStartParams,
    SessionStartResult,
};
use kaged_plugin_sdk::{kaged_plugin, Call, Host, KagedPlugin, PluginError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use support::{agent_context, Wire};

#[derive(Deserialize, JsonSchema)]
struct Retain {
    /// What to remember.
    content: String,
}

#[derive(Serialize)]
struct Retained {
    count: usize,
}

#[derive(Deserialize, JsonSchema)]
struct Recall {
    query: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Config {
    store: String,
}

#[derive(Default)]
struct Memory {
    notes: Mutex<Vec<String>>,
    store: Mutex<Option<String>>,
    stopped: Arc<AtomicBool>,
}

#[kaged_plugin(
    name = "memory-markdown",
    notifications("memory.saved"),
    roles(observer, compactor),
    capabilities("kaged:storage:read"),
    manifest_base = "tests/ui/memory.base.yaml"
)]
impl Memory {
    /// Store information in long-term memory.
    #[tool]
    async fn retain(&self, args: Retain, call: Call) -> Result<Retained, PluginError> {
        call.host
            .notify("memory.saved", json!({ "content": args.content }))?;
        let mut notes = self
            .notes
            .lock()
            .map_err(|_| PluginError::new("poisoned"))?;
        notes.push(args.content);
        Ok(Retained { count: notes.len() })
    }

    /// Search long-term memory.
    ///
    /// Matches substrings.
    #[tool(name = "recall")]
    async fn search(&self, args: Recall) -> Result<Vec<String>, PluginError> {
        let notes = self
            .notes
            .lock()
            .map_err(|_| PluginError::new("poisoned"))?;
        Ok(notes
            .iter()
            .filter(|n| n.contains(&args.query))
            .cloned()
            .collect())
    }

    #[method("memory.count")]
    async fn count(&self) -> Result<usize, PluginError> {
        Ok(self
            .notes
            .lock()
            .map_err(|_| PluginError::new("poisoned"))?
            .len())
    }

    #[method("memory.whoami")]
    async fn whoami(&self, call: Call) -> Result<Option<PluginCallContext>, PluginError> {
        Ok(call.context)
    }

    /// Errors convert into `PluginError` (here from `std::io::Error`).
    #[method("memory.fail")]
    async fn fail(&self, _p: Value) -> Result<(), std::io::Error> {
        Err(std::io::Error::other("disk on fire"))
    }

    #[hook]
    async fn on_session_start(
        &self,
        p: SessionStartParams,
    ) -> Result<Option<SessionStartResult>, PluginError> {
        let store = self
            .store
            .lock()
            .map_err(|_| PluginError::new("poisoned"))?
            .clone();
        Ok(Some(SessionStartResult {
            inject: Some(format!(
                "{} via {}",
                p.context.agent_path.unwrap_or_default(),
                store.unwrap_or_default()
            )),
        }))
    }

    #[hook(pre_compact)]
    async fn compact(&self, p: CompactParams) -> Result<CompactorResult, PluginError> {
        Ok(CompactorResult {
            role: PluginRole::Compactor,
            messages: p.messages_remaining,
            superseded: p
                .messages_being_compacted
                .into_iter()
                .map(|m| m.id)
                .collect(),
            summary: None,
        })
    }

    #[config]
    async fn configure(&self, config: Config, _host: Host) -> Result<(), PluginError> {
        *self
            .store
            .lock()
            .map_err(|_| PluginError::new("poisoned"))? = Some(config.store);
        Ok(())
    }

    #[shutdown]
    async fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// A plain helper: not a handler, left alone.
    fn helper(&self) -> usize {
        7
    }
}

fn memory() -> (kaged_plugin_sdk::Plugin, Arc<AtomicBool>) {
    let m = Memory::default();
    let stopped = Arc::clone(&m.stopped);
    assert_eq!(m.helper(), 7);
    (m.build().expect("valid plugin"), stopped)
}

#[tokio::test]
async fn methods_tools_hooks_config_and_shutdown_reach_the_handlers() {
    let (plugin, stopped) = memory();
    let (mut w, init) = Wire::ready(plugin).await;
    assert_eq!(
        init["result"]["methods"],
        json!([
            "memory-markdown.retain",
            "memory-markdown.recall",
            "memory.count",
            "memory.whoami",
            "memory.fail"
        ])
    );
    assert_eq!(init["result"]["notifications"], json!(["memory.saved"]));
    assert_eq!(
        init["result"]["capabilities_used"],
        json!(["kaged:storage:read"])
    );

    let mut params = json!({ "content": "the sky is blue" });
    params["_context"] = agent_context();
    w.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "memory-markdown.retain", "params": params}),
    )
    .await;
    let note = w.recv().await;
    assert_eq!(note["method"], "memory.saved");
    assert_eq!(w.recv().await["result"], json!({ "count": 1 }));

    let bad = w
        .request(2, "memory-markdown.retain", json!({ "content": 3 }))
        .await;
    assert_eq!(bad["error"]["code"], -32602);
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("/content"),
        "{bad}"
    );

    let found = w
        .request(3, "memory-markdown.recall", json!({ "query": "sky" }))
        .await;
    assert_eq!(found["result"], json!(["the sky is blue"]));
    assert_eq!(w.request(4, "memory.count", json!({})).await["result"], 1);
    let who = w
        .request(5, "memory.whoami", json!({ "_context": agent_context() }))
        .await;
    assert_eq!(who["result"]["agent_path"], "primary");
    let failed = w.request(6, "memory.fail", json!({})).await;
    assert_eq!(failed["error"]["code"], -32000);
    assert_eq!(failed["error"]["message"], "disk on fire");

    assert_eq!(
        w.request(7, "config.update", json!({ "store": "/m" }))
            .await["result"]["status"],
        "ok"
    );
    let invalid = w
        .request(8, "config.update", json!({ "store": "/m", "colour": 1 }))
        .await;
    assert_eq!(invalid["error"]["code"], -32004);

    let start = w
        .request(
            9,
            "kaged.hook.on_session_start",
            json!({ "_context": agent_context() }),
        )
        .await;
    assert_eq!(start["result"], json!({ "inject": "primary via /m" }));
    let msg = |id: &str| json!({ "id": id, "role": "user", "content": id });
    let compact = json!({ "_context": agent_context(), "role": "compactor", "strategy": "summarize",
        "trigger": "threshold_crossed", "messages_being_compacted": [msg("a")], "messages_remaining": [msg("b")] });
    let answer = w.request(10, "kaged.hook.pre_compact", compact).await;
    assert_eq!(answer["result"]["superseded"], json!(["a"]));
    assert_eq!(answer["result"]["messages"], json!([msg("b")]));

    w.send(json!({"jsonrpc": "2.0", "method": "shutdown"}))
        .await;
    w.exit().await;
    assert!(
        stopped.load(Ordering::SeqCst),
        "the #[shutdown] handler ran"
    );
}

#[test]
fn the_manifest_follows_from_the_code_and_the_base_file() {
    let (plugin, _) = memory();
    let m = plugin.manifest();
    assert_eq!(m.name, "memory-markdown");
    assert_eq!(m.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(m.description, "Markdown-file-backed agent memory.");
    assert_eq!(m.command, ["./memory-markdown"]);
    assert_eq!(m.capability_strings(), ["net:[]", "kaged:storage:read"]);
    assert_eq!(
        m.roles,
        Some(vec!["observer".to_string(), "compactor".to_string()])
    );
    assert_eq!(m.hooks, ["on_session_start", "pre_compact"]);
    assert_eq!(m.methods, ["memory.count", "memory.whoami", "memory.fail"]);
    assert_eq!(m.notifications, ["memory.saved"]);
    assert_eq!(m.tools[0].name, "retain");
    assert_eq!(
        m.tools[0].description,
        "Store information in long-term memory."
    );
    assert_eq!(m.tools[0].parameters_schema["required"], json!(["content"]));
    assert_eq!(
        m.tools[1].description,
        "Search long-term memory.\n\nMatches substrings."
    );
    let config = m
        .config_schema
        .as_ref()
        .expect("config_schema from #[config]");
    assert_eq!(config["additionalProperties"], false);
    assert_eq!(m.knobs[0].0, "store");
    assert_eq!(m.hook_timeout_sec, Some(20));
    kaged_plugin_sdk::testing::check_tool_schemas(&m).expect("valid tool schemas");
    // The YAML text parses back to the same manifest.
    let yaml = plugin.manifest_yaml();
    assert_eq!(
        kaged_plugin_sdk::manifest::Manifest::from_yaml_str(&yaml).expect("parse"),
        m
    );
}

#[test]
fn the_generated_builder_can_be_extended() {
    let plugin = Memory::default()
        .plugin_builder()
        .method("memory.extra", |_p: Value, _c: Call| async move {
            Ok::<_, PluginError>(1)
        })
        .build()
        .expect("valid plugin");
    assert!(plugin.methods().iter().any(|m| m == "memory.extra"));
    let dup = Memory::default()
        .plugin_builder()
        .method("memory.count", |_p: Value, _c: Call| async move {
            Ok::<_, PluginError>(1)
        })
        .build();
    assert!(
        dup.is_err(),
        "a duplicate added by hand is still a definition error"
    );
}
