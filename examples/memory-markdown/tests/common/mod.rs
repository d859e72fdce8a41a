//! Shared helpers of the end-to-end tests: launch the real binary under
//! the host simulator (caged wherever bwrap works) with a temporary
//! directory as the operator's config root, so that the default store,
//! `config:/memory` (the path the manifest grants), is in it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use kaged_example_memory_markdown::entry::Entry;
use kaged_host_core::testing::StagedPlugin;
use kaged_host_core::{HostConfig, HostSim, PluginHandle, TimeScale, Transcript};
use kaged_plugin_sdk::protocol::PluginCallContext;
use serde_json::Value;

pub struct Mem {
    pub staged: StagedPlugin,
    pub plugin: PluginHandle,
    /// The config root: holds `memory/`, the store (and nothing else,
    /// unless something escaped it).
    pub tmp: tempfile::TempDir,
    pub transcript: Transcript,
}

impl Mem {
    /// `config:/memory` under the config root.
    pub fn store(&self) -> PathBuf {
        self.tmp.path().join("memory")
    }

    pub async fn tool(&self, tool: &str, args: Value, ctx: &PluginCallContext) -> Value {
        let method = format!("memory-markdown.{tool}");
        self.plugin
            .call(&method, Some(args), Some(ctx.clone()))
            .await
            .unwrap_or_else(|e| panic!("{method}: {e:?}"))
    }

    pub async fn tool_err(
        &self,
        tool: &str,
        args: Value,
        ctx: Option<PluginCallContext>,
    ) -> (i64, String) {
        let method = format!("memory-markdown.{tool}");
        let e = self
            .plugin
            .call(&method, Some(args), ctx)
            .await
            .expect_err("an error");
        (e.code(), e.rpc_error().message)
    }

    pub async fn hook(&self, hook: &str, params: Value, ctx: &PluginCallContext) -> Value {
        let method = format!("kaged.hook.{hook}");
        self.plugin
            .call(&method, Some(params), Some(ctx.clone()))
            .await
            .unwrap_or_else(|e| panic!("{method}: {e:?}"))
    }

    pub async fn configure(&self, config: Value) -> Result<Value, (i64, String)> {
        self.plugin
            .call("config.update", Some(config), None)
            .await
            .map_err(|e| (e.code(), e.rpc_error().message))
    }
}

/// Launch the plugin with a temporary config root; `config` (whose
/// `store` is left to its default, `config:/memory`) is sent with
/// `config.update` first.
pub async fn launch(config: Value) -> Mem {
    let staged = StagedPlugin::new(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        env!("CARGO_BIN_EXE_memory-markdown"),
    )
    .expect("stage memory-markdown");
    let tmp = tempfile::tempdir().expect("tempdir");
    let transcript = Transcript::memory();
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(0.5).expect("scale"))
            .with_transcript(transcript.clone())
            .with_config_root(tmp.path().to_path_buf()),
    );
    let plugin = host
        .launch(staged.dir())
        .await
        .expect("launch memory-markdown");
    let mem = Mem {
        staged,
        plugin,
        tmp,
        transcript,
    };
    assert!(config.get("store").is_none(), "the store is the default");
    mem.configure(config).await.expect("config.update");
    mem
}

pub fn ctx(project: &str, agent: &str) -> PluginCallContext {
    PluginCallContext::agent(project, agent, "ses_1", "req_1")
}

pub fn md_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "md"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

pub fn entries(dir: &Path) -> Vec<Entry> {
    md_files(dir)
        .iter()
        .map(|p| Entry::parse(&std::fs::read_to_string(p).expect("read")).expect("an entry"))
        .collect()
}
