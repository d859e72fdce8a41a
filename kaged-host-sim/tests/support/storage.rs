//! Helpers of the storage broker tests (`tests/storage/`).
#![allow(dead_code)]

use kaged_host_storage::StorageBroker;
use kaged_host_storage::{StorageClient, StorageDenial};
use kaged_plugin_protocol::StorageMethod;
use serde_json::{json, Value};

pub const DENIED: i64 = -32003;
pub const INVALID: i64 = -32602;

pub const VICTIM_SECRET: &str = "TOPSECRET-victim-row";

pub fn broker() -> StorageBroker {
    StorageBroker::open_temp().expect("open temp broker")
}

pub fn writer(name: &str) -> StorageClient {
    StorageClient::new(name, true, true)
}

pub fn reader(name: &str) -> StorageClient {
    StorageClient::new(name, true, false)
}

pub fn exec(
    b: &StorageBroker,
    c: &StorageClient,
    sql: &str,
    params: Value,
) -> Result<Value, StorageDenial> {
    b.handle(
        c,
        StorageMethod::Exec,
        Some(json!({ "sql": sql, "params": params })),
    )
}

pub fn query(
    b: &StorageBroker,
    c: &StorageClient,
    sql: &str,
    params: Value,
) -> Result<Value, StorageDenial> {
    b.handle(
        c,
        StorageMethod::Query,
        Some(json!({ "sql": sql, "params": params })),
    )
}

pub fn schema(b: &StorageBroker, c: &StorageClient) -> Vec<String> {
    let v = b.handle(c, StorageMethod::Schema, None).expect("schema");
    serde_json::from_value(v["tables"].clone()).expect("tables array")
}

/// The error code of a failed call (panics with the answer if it succeeded).
#[track_caller]
pub fn code(r: Result<Value, StorageDenial>) -> i64 {
    match r {
        Ok(v) => panic!("expected an error, got {v}"),
        Err(d) => d.error.code,
    }
}

#[track_caller]
pub fn ok(r: Result<Value, StorageDenial>) -> Value {
    match r {
        Ok(v) => v,
        Err(d) => panic!("expected success, got {d}"),
    }
}

/// `(type, name)` of every object in the database, through a raw connection.
pub fn master(b: &StorageBroker) -> Vec<(String, String)> {
    let conn = rusqlite::Connection::open(b.path()).expect("raw open");
    let mut stmt = conn
        .prepare("SELECT type, name FROM sqlite_master ORDER BY type, name")
        .expect("prepare");
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .expect("query");
    rows.map(|r| r.expect("row")).collect()
}

pub fn master_names(b: &StorageBroker) -> Vec<String> {
    master(b).into_iter().map(|(_, n)| n).collect()
}

/// Give the "victim" plugin a table with a secret row, an index, a view and
/// a trigger.
pub fn seed_victim(b: &StorageBroker) {
    let v = writer("victim");
    for sql in [
        "CREATE TABLE secrets (id INTEGER PRIMARY KEY, secret TEXT NOT NULL)",
        "CREATE TABLE audit (n INTEGER)",
        "CREATE INDEX secrets_by_secret ON secrets (secret)",
        "CREATE VIEW secret_view AS SELECT secret FROM secrets",
        "CREATE TRIGGER on_secret AFTER INSERT ON secrets BEGIN INSERT INTO audit (n) VALUES (new.id); END",
    ] {
        ok(exec(b, &v, sql, json!([])));
    }
    ok(exec(
        b,
        &v,
        "INSERT INTO secrets (id, secret) VALUES (?, ?)",
        json!([1, VICTIM_SECRET]),
    ));
}

/// Everything of the victim, read through a raw connection: its catalogue
/// entries (with SQL) and its rows. Must never change under attack.
pub fn victim_fingerprint(b: &StorageBroker) -> String {
    let conn = rusqlite::Connection::open(b.path()).expect("raw open");
    let mut out = String::new();
    let mut stmt = conn
        .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name LIKE 'plugin_victim_%' ORDER BY name")
        .expect("prepare");
    let rows = stmt
        .query_map([], |r| {
            Ok(format!(
                "{}|{}|{}|{:?}\n",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?
            ))
        })
        .expect("query");
    for r in rows {
        out.push_str(&r.expect("row"));
    }
    let mut stmt = conn
        .prepare("SELECT id, secret FROM plugin_victim_secrets ORDER BY id")
        .expect("prepare");
    let rows = stmt
        .query_map([], |r| {
            Ok(format!(
                "{}={}\n",
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?
            ))
        })
        .expect("query");
    for r in rows {
        out.push_str(&r.expect("row"));
    }
    let n: i64 = conn
        .query_row("SELECT count(*) FROM plugin_victim_audit", [], |r| r.get(0))
        .expect("count");
    out.push_str(&format!("audit={n}\n"));
    out
}

/// Whether any answer contains the victim's secret (or its prefix).
pub fn leaks(v: &Value) -> bool {
    let s = v.to_string();
    s.contains(VICTIM_SECRET) || s.to_ascii_lowercase().contains("plugin_")
}

/// The small quota the quota tests set (`StorageBroker::with_quota`).
pub const QUOTA: u64 = 64 * 1024;

/// `plugin`'s usage in bytes, counted from the file the way the broker
/// counts it: the pages of its tables and indexes, and its schema text
/// (the catalogue's `CREATE` statements) rounded up to pages.
pub fn usage(path: &std::path::Path, plugin: &str) -> u64 {
    let conn = rusqlite::Connection::open(path).expect("raw");
    let prefix = kaged_host_storage::storage_prefix(plugin);
    let page: i64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .expect("page size");
    let mut stmt = conn
        .prepare("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index') AND rootpage > 0")
        .expect("prepare");
    let btrees: Vec<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect();
    let mut pages = 0i64;
    for (name, _) in btrees.iter().filter(|(_, t)| t.starts_with(&prefix)) {
        let n: i64 = conn
            .query_row("SELECT count(*) FROM dbstat WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .expect("dbstat");
        pages += n;
    }
    let mut stmt = conn
        .prepare(
            "SELECT tbl_name, length(CAST(sql AS BLOB)) FROM sqlite_master WHERE sql IS NOT NULL",
        )
        .expect("prepare");
    let text: i64 = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .filter(|(t, _)| t.starts_with(&prefix))
        .map(|(_, n)| n)
        .sum();
    pages += (text + page - 1) / page;
    u64::try_from(pages * page).expect("a size")
}

/// The refusal's message for a plugin using `used` bytes of [`QUOTA`].
pub fn refusal(plugin: &str, used: u64) -> String {
    format!(
        "storage quota of {QUOTA} bytes exceeded for plugin {plugin}: {used} bytes used, {} bytes left, and the statement needs more; delete rows or drop tables to make room",
        QUOTA.saturating_sub(used)
    )
}
