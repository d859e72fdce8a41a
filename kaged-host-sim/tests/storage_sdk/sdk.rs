//! The SDK's typed storage client (`kaged_plugin_sdk::storage::Storage`:
//! `exec`, `query`, `query_as::<T>()`, `schema` and its typed errors)
//! against the real broker, through the whole host: an SDK plugin served
//! in-process over a pipe, its requests answered by `BrokerHandler` over a
//! database file (plugin-host.md § "Storage methods", ADDENDUM §7).

use std::path::Path;
use std::sync::Arc;

use crate::support::host::{one, EASY};
use kaged_host_core::{AuditLog, HostConfig, HostSim, PluginHandle, TimeScale};
use kaged_host_sim::ConnectPlugin;
use kaged_host_storage::{BrokerHandler, StorageBroker};
use kaged_plugin_sdk::storage::StorageError;
use kaged_plugin_sdk::{sql_params, Call, Plugin, PluginBuilder, PluginError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A row, typed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Preset {
    id: i64,
    name: String,
    weight: f64,
    note: Option<String>,
    /// SQLite has no boolean: a bound `true` reads back as 1.
    enabled: i64,
}

/// Which `StorageError` variant a call failed with, and its wire error.
fn classify(e: StorageError) -> Value {
    let variant = match &e {
        StorageError::Denied(_) => "Denied",
        StorageError::InvalidParams(_) => "InvalidParams",
        StorageError::Failed(_) => "Failed",
        StorageError::Decode(_) => "Decode",
        StorageError::Connection(_) => "Connection",
    };
    let rpc = e.rpc().cloned();
    json!({"variant": variant, "code": rpc.as_ref().map(|r| r.code),
           "message": rpc.map(|r| r.message).unwrap_or_else(|| e.to_string())})
}

pub(super) fn client(name: &str, capabilities: &[&str]) -> PluginBuilder {
    let mut b = Plugin::builder(name)
        .version("1.0.0")
        .description("typed storage client test")
        .command(["./in-process"]);
    for c in capabilities {
        b = b.capability_used(*c);
    }
    b.method("db.setup", |_: Value, c: Call| async move {
        let s = c.host.storage();
        s.exec(
            "CREATE TABLE IF NOT EXISTS presets (id INTEGER PRIMARY KEY, name TEXT NOT NULL, \
             weight REAL NOT NULL, note TEXT, enabled INTEGER NOT NULL)",
            sql_params![],
        )
        .await?;
        let done = s
            .exec(
                "INSERT INTO presets (name, weight, note, enabled) VALUES (?, ?, ?, ?), (?, ?, ?, ?)",
                sql_params!["web-dev", 1.5, Some("strict"), true, "cli", 2.0, None::<String>, false],
            )
            .await?;
        Ok::<_, PluginError>(done.rows_affected)
    })
    .method("db.typed", |_: Value, c: Call| async move {
        let rows = c
            .host
            .storage()
            .query_as::<Preset>(
                "SELECT id, name, weight, note, enabled FROM presets WHERE weight > ? ORDER BY id",
                sql_params![1.0],
            )
            .await?;
        Ok::<_, PluginError>(rows)
    })
    .method("db.raw", |p: Value, c: Call| async move {
        let sql = p["sql"].as_str().unwrap_or_default().to_owned();
        match c.host.storage().query(&sql, sql_params![]).await {
            Ok(r) => Ok::<_, PluginError>(json!({"rows": r.rows, "columns": r.columns})),
            Err(e) => Ok(classify(e)),
        }
    })
    .method("db.exec", |p: Value, c: Call| async move {
        let sql = p["sql"].as_str().unwrap_or_default().to_owned();
        match c.host.storage().exec(&sql, sql_params![]).await {
            Ok(r) => Ok::<_, PluginError>(json!({"rows_affected": r.rows_affected})),
            Err(e) => Ok(classify(e)),
        }
    })
    .method("db.decode", |_: Value, c: Call| async move {
        let r = c
            .host
            .storage()
            .query_as::<Preset>("SELECT name AS id FROM presets", sql_params![])
            .await;
        Ok::<_, PluginError>(r.map(|_| json!("decoded")).unwrap_or_else(classify))
    })
    .method("db.schema", |_: Value, c: Call| async move {
        Ok::<_, PluginError>(c.host.storage().schema().await?.tables)
    })
}

/// Serve `plugin` in-process and connect the host to it.
pub(super) async fn connect(host: &HostSim, plugin: Plugin) -> PluginHandle {
    host.connect_plugin(plugin).await.expect("handshake")
}

fn host_over(db: &Path) -> (HostSim, AuditLog) {
    let audit = AuditLog::memory();
    let broker = StorageBroker::open(db).expect("broker");
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(EASY).expect("scale"))
            .with_audit(audit.clone())
            .with_storage(Arc::new(BrokerHandler::new(broker))),
    );
    (host, audit)
}

pub(super) async fn call(s: &PluginHandle, method: &str, params: Value) -> Value {
    s.call(method, Some(params), None)
        .await
        .unwrap_or_else(|e| panic!("{method}: {e:?}"))
}

#[tokio::test]
async fn typed_client_round_trips_through_the_real_broker() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("kaged.sqlite3");
    let (host, audit) = host_over(&db);
    let rw = ["kaged:storage:read", "kaged:storage:write"];
    let s = connect(&host, client("sdk-client", &rw).build().expect("plugin")).await;

    assert_eq!(call(&s, "db.setup", json!({})).await, json!(2));
    let typed: Vec<Preset> =
        serde_json::from_value(call(&s, "db.typed", json!({})).await).expect("typed rows");
    assert_eq!(
        typed,
        [
            Preset {
                id: 1,
                name: "web-dev".into(),
                weight: 1.5,
                note: Some("strict".into()),
                enabled: 1
            },
            Preset {
                id: 2,
                name: "cli".into(),
                weight: 2.0,
                note: None,
                enabled: 0
            },
        ]
    );
    assert_eq!(call(&s, "db.schema", json!({})).await, json!(["presets"]));
    let raw = call(
        &s,
        "db.raw",
        json!({"sql": "SELECT count(*) AS n FROM presets"}),
    )
    .await;
    assert_eq!(raw, json!({"rows": [{"n": 2}], "columns": ["n"]}));

    // Typed errors: a denial is `Denied` (-32003) and audited; an SQL error
    // is `InvalidParams` (-32602) naming the unprefixed table; a row that
    // does not fit `T` is `Decode`.
    let denied = call(
        &s,
        "db.raw",
        json!({"sql": "SELECT name FROM sqlite_master"}),
    )
    .await;
    assert_eq!(
        (&denied["variant"], &denied["code"]),
        (&json!("Denied"), &json!(-32003)),
        "{denied}"
    );
    let audited = one(&audit, "plugin.storage_denied");
    assert_eq!(audited.data["method"], "kaged.storage.query");
    let denied = call(
        &s,
        "db.raw",
        json!({"sql": "SELECT * FROM \"plugin_sdk_client_presets\""}),
    )
    .await;
    assert_eq!(
        denied["variant"], "Denied",
        "its own prefix spelled out: {denied}"
    );
    let missing = call(&s, "db.raw", json!({"sql": "SELECT * FROM nothing_here"})).await;
    assert_eq!(
        (&missing["variant"], &missing["code"]),
        (&json!("InvalidParams"), &json!(-32602))
    );
    assert!(
        missing["message"]
            .as_str()
            .is_some_and(|m| m.contains("nothing_here") && !m.contains("plugin_")),
        "{missing}"
    );
    let decode = call(&s, "db.decode", json!({})).await;
    assert_eq!(decode["variant"], "Decode", "{decode}");
    let pragma = call(&s, "db.exec", json!({"sql": "PRAGMA writable_schema = 1"})).await;
    assert_eq!(pragma["variant"], "Denied", "{pragma}");
    s.shutdown().await;

    // The table exists under its prefixed name, in the file.
    let conn = rusqlite::Connection::open(&db).expect("open");
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'plugin_sdk_client_presets'",
            [],
            |r| r.get(0),
        )
        .expect("catalogue");
    assert_eq!(n, 1);
}

#[tokio::test]
async fn read_only_client_gets_a_typed_denial_for_writes_and_ddl() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (host, audit) = host_over(&dir.path().join("kaged.sqlite3"));
    let s = connect(
        &host,
        client("reader", &["kaged:storage:read"])
            .build()
            .expect("plugin"),
    )
    .await;
    let ddl = call(&s, "db.exec", json!({"sql": "CREATE TABLE t (x)"})).await;
    assert_eq!(
        (&ddl["variant"], &ddl["code"]),
        (&json!("Denied"), &json!(-32003)),
        "{ddl}"
    );
    let e = s
        .call("db.setup", Some(json!({})), None)
        .await
        .expect_err("setup needs write");
    assert_eq!(
        e.code(),
        -32003,
        "a handler's `?` on a storage denial keeps -32003"
    );
    assert!(
        e.rpc_error().message.contains("storage access denied"),
        "{e:?}"
    );
    // Reading still works (an empty schema).
    assert_eq!(call(&s, "db.schema", json!({})).await, json!([]));
    assert_eq!(
        audit.of(kaged_host_core::AuditEvent::StorageDenied).len(),
        2
    );
    s.shutdown().await;
}
