//! Shared helpers of the end-to-end tests: the real `oh-my-pi` binary,
//! launched by the host simulator with a real storage broker over a
//! database file and a preset directory, both in a temporary directory.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kaged_host_core::testing::StagedPlugin;
use kaged_host_core::{
    AuditLog, DefaultHandler, HostConfig, HostSim, PluginHandle, PluginRequestHandler, TimeScale,
};
use kaged_host_storage::{BrokerHandler, StorageBroker};
use kaged_plugin_sdk::protocol::Notification;
use serde_json::{json, Value};

/// The time scale of these tests (timeouts are never asserted).
pub const SCALE: f64 = 0.5;

/// A temporary directory with `kaged.sqlite3` and `presets/`.
pub struct Place {
    pub tmp: tempfile::TempDir,
}

impl Place {
    pub fn new() -> Place {
        let tmp = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(tmp.path().join("presets")).expect("presets dir");
        Place { tmp }
    }

    pub fn db(&self) -> PathBuf {
        self.tmp.path().join("kaged.sqlite3")
    }

    pub fn presets(&self) -> PathBuf {
        self.tmp.path().join("presets")
    }

    /// Write `presets/<file>`.
    pub fn preset_file(&self, file: &str, text: &str) {
        std::fs::write(self.presets().join(file), text).expect("write preset");
    }

    /// A host whose plugins share a broker over this place's database.
    pub fn host(&self) -> (HostSim, AuditLog) {
        let broker = StorageBroker::open(&self.db()).expect("broker");
        host_with(Arc::new(BrokerHandler::new(broker)), true)
    }
}

/// A host with `handler` answering plugin requests.
pub fn host_with(handler: Arc<dyn PluginRequestHandler>, storage: bool) -> (HostSim, AuditLog) {
    let audit = AuditLog::memory();
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(SCALE).expect("scale"))
            .with_audit(audit.clone())
            .with_storage_available(storage)
            .with_handler(handler),
    );
    (host, audit)
}

/// A host without storage (the default handler answers `-32003`).
pub fn host_without_storage() -> (HostSim, AuditLog) {
    host_with(Arc::new(DefaultHandler), false)
}

/// The running plugin.
pub struct Omp {
    pub staged: StagedPlugin,
    pub plugin: PluginHandle,
}

impl Omp {
    /// Launch oh-my-pi on `host`, configured to read `presets` (granted
    /// `read:fs:` in the staged manifest, as an operator who keeps presets
    /// outside /opt/oh-my-pi does: the plugin runs caged).
    pub async fn launch(host: &HostSim, presets: &Path) -> Omp {
        let mut staged = StagedPlugin::new(
            &PathBuf::from(env!("CARGO_MANIFEST_DIR")),
            env!("CARGO_BIN_EXE_oh-my-pi"),
        )
        .expect("stage oh-my-pi");
        let presets = std::fs::canonicalize(presets).unwrap_or_else(|_| presets.to_path_buf());
        staged
            .grant(&format!("read:fs:{}", presets.display()))
            .expect("grant the preset directory");
        let plugin = host.launch(staged.dir()).await.expect("launch oh-my-pi");
        let omp = Omp { staged, plugin };
        omp.ok(
            "config.update",
            json!({"preset_dir": presets.to_string_lossy()}),
        )
        .await;
        omp
    }

    pub async fn ok(&self, method: &str, params: Value) -> Value {
        self.plugin
            .call(method, Some(params), None)
            .await
            .unwrap_or_else(|e| panic!("{method}: {e:?}"))
    }

    /// The error of a call that must fail: code, message, data.
    pub async fn err(&self, method: &str, params: Value) -> (i64, String, Value) {
        let e = self
            .plugin
            .call(method, Some(params.clone()), None)
            .await
            .expect_err(&format!("{method} {params} fails"));
        let rpc = e.rpc_error();
        (rpc.code, rpc.message, rpc.data.unwrap_or(Value::Null))
    }

    /// The installed names, in order.
    pub async fn names(&self) -> Vec<String> {
        let v = self.ok("presets.list", json!({})).await;
        v["presets"]
            .as_array()
            .expect("presets")
            .iter()
            .map(|p| p["name"].as_str().expect("name").to_owned())
            .collect()
    }
}

/// The next notification called `name`, within a scaled bound.
pub async fn next_named(
    rx: &mut tokio::sync::broadcast::Receiver<Notification>,
    name: &str,
) -> Option<Notification> {
    let limit = TimeScale::new(SCALE)
        .expect("scale")
        .apply(Duration::from_secs(10));
    tokio::time::timeout(limit, async {
        loop {
            match rx.recv().await {
                Ok(n) if n.method == name => return Some(n),
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    })
    .await
    .ok()
    .flatten()
}

/// Every object in the database file: `(type, name, tbl_name)`.
pub fn catalogue(db: &Path) -> Vec<(String, String, String)> {
    let conn = rusqlite::Connection::open(db).expect("open");
    let mut stmt = conn
        .prepare("SELECT type, name, tbl_name FROM sqlite_master ORDER BY name")
        .expect("prepare");
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("query");
    rows.collect::<Result<_, _>>().expect("rows")
}

pub const WEB_DEV: &str = "\
name: web-dev
version: 1.0.0
description: TypeScript web development with strict linting and Playwright tests.
tags: [web, typescript, testing]
settings:
  model: sonnet
  system_prompt: You are a careful web developer.
  tools: [bash, edit]
";

pub const RUST_CLI: &str = r#"{"version": "0.3.0", "description": "Rust command-line tools with clippy and cargo-nextest.",
 "tags": ["rust", "cli"], "settings": {"model": "opus"}}"#;
