//! The per-plugin storage quota (`StorageBroker::with_quota`,
//! `--storage-quota`): a write that would take a plugin's tables and
//! indexes past it is refused with `-32003` and a message naming the
//! quota, rolled back, and audited as `plugin.storage_denied` with reason
//! `quota`; reads and deletes keep working so the plugin can clean up.
//! Small quotas keep the tests fast.

use std::path::Path;
use std::sync::Arc;

use super::sdk::{call, client, connect};
use crate::support::host::{one, EASY};
use crate::support::storage::*;
use kaged_host_core::{AuditLog, HostConfig, HostSim, TimeScale};
use kaged_host_storage::{storage_prefix, DEFAULT_STORAGE_QUOTA};
use kaged_host_storage::{BrokerHandler, StorageBroker};
use serde_json::{json, Value};

pub const QUOTA: u64 = 64 * 1024;

fn hog(b: &StorageBroker) -> kaged_host_storage::StorageClient {
    let c = writer("hog");
    ok(exec(
        b,
        &c,
        "CREATE TABLE blobs (id INTEGER PRIMARY KEY, b BLOB)",
        json!([]),
    ));
    c
}

fn rows(b: &StorageBroker, c: &kaged_host_storage::StorageClient) -> Value {
    ok(query(
        b,
        c,
        "SELECT id, length(b) AS n FROM blobs ORDER BY id",
        json!([]),
    ))["rows"]
        .clone()
}

/// `plugin`'s usage in bytes, counted from the file the way the broker
/// counts it: the pages of its tables and indexes, and its schema text
/// (the catalogue's `CREATE` statements) rounded up to pages.
pub fn usage(path: &Path, plugin: &str) -> u64 {
    let conn = rusqlite::Connection::open(path).expect("raw");
    let prefix = storage_prefix(plugin);
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

#[test]
fn the_default_quota_is_64_mib() {
    assert_eq!(DEFAULT_STORAGE_QUOTA, 64 << 20);
    assert_eq!(broker().quota(), DEFAULT_STORAGE_QUOTA);
    assert_eq!(broker().with_quota(QUOTA).quota(), QUOTA);
}

#[test]
fn a_write_past_the_quota_is_refused_rolled_back_and_a_delete_still_works() {
    let b = broker().with_quota(QUOTA);
    let c = hog(&b);
    for id in 1..=2 {
        ok(exec(
            &b,
            &c,
            "INSERT INTO blobs VALUES (?, zeroblob(20000))",
            json!([id]),
        ));
    }
    let before = rows(&b, &c);
    let d = exec(
        &b,
        &c,
        "INSERT INTO blobs VALUES (3, zeroblob(30000))",
        json!([]),
    )
    .expect_err("past the quota");
    assert_eq!(d.error.code, DENIED);
    assert_eq!(d.error.message, refusal("hog", usage(b.path(), "hog")));
    assert!(usage(b.path(), "hog") <= QUOTA);
    assert!(d.is_access_denial());
    assert_eq!(d.reason, "quota");
    // Not kept, and reads still work.
    assert_eq!(rows(&b, &c), before);
    // An UPDATE growing a row is refused too; one that shrinks it is not.
    let d = exec(
        &b,
        &c,
        "UPDATE blobs SET b = zeroblob(60000) WHERE id = 1",
        json!([]),
    )
    .expect_err("growing update");
    assert_eq!(d.error.code, DENIED);
    ok(exec(
        &b,
        &c,
        "UPDATE blobs SET b = zeroblob(10) WHERE id = 2",
        json!([]),
    ));
    ok(exec(&b, &c, "DELETE FROM blobs WHERE id = 1", json!([])));
    assert_eq!(rows(&b, &c), json!([{"id": 2, "n": 10}]));
    // Room again.
    ok(exec(
        &b,
        &c,
        "INSERT INTO blobs VALUES (3, zeroblob(30000))",
        json!([]),
    ));
    // Another plugin has its own quota.
    let other = writer("other");
    ok(exec(&b, &other, "CREATE TABLE t (b BLOB)", json!([])));
    ok(exec(
        &b,
        &other,
        "INSERT INTO t VALUES (zeroblob(40000))",
        json!([]),
    ));
}

#[test]
fn one_runaway_statement_is_stopped_before_it_fills_the_disk() {
    let b = broker().with_quota(QUOTA);
    let c = hog(&b);
    // The file and its write-ahead log, where a transaction's pages go.
    let size = |b: &StorageBroker| {
        let wal = b.path().with_extension("sqlite3-wal");
        std::fs::metadata(b.path()).expect("file").len()
            + std::fs::metadata(wal).map(|m| m.len()).unwrap_or(0)
    };
    let start = size(&b);
    // 100 MB asked for in one statement.
    let d = exec(
        &b,
        &c,
        "INSERT INTO blobs (b) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000) SELECT zeroblob(10000) FROM n",
        json!([]),
    )
    .expect_err("runaway");
    assert_eq!(d.error.code, DENIED, "{d}");
    assert_eq!(d.reason, "quota");
    assert_eq!(d.error.message, refusal("hog", usage(b.path(), "hog")));
    assert_eq!(rows(&b, &c), json!([]));
    // The file grew by at most the quota and the slack (1 MiB), never 100 MB.
    assert!(size(&b) < start + (2 << 20), "{} → {}", start, size(&b));
    ok(exec(
        &b,
        &c,
        "INSERT INTO blobs VALUES (1, zeroblob(1000))",
        json!([]),
    ));
}

#[test]
fn usage_survives_reopening_and_ddl_counts() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("db.sqlite3");
    {
        let b = StorageBroker::open(&path)
            .expect("open")
            .with_quota(4 * QUOTA);
        let c = hog(&b);
        ok(exec(
            &b,
            &c,
            "INSERT INTO blobs VALUES (1, zeroblob(50000))",
            json!([]),
        ));
        ok(exec(
            &b,
            &c,
            "CREATE INDEX by_b ON blobs (id, b)",
            json!([]),
        ));
    }
    // Reopened with a smaller quota and measured again from the file: the
    // 50 KB row and its 50 KB index entry are over it, so any growth is
    // refused ...
    let b = StorageBroker::open(&path)
        .expect("reopen")
        .with_quota(QUOTA);
    let c = writer("hog");
    let d = exec(&b, &c, "CREATE TABLE more (a)", json!([])).expect_err("over");
    assert_eq!(d.error.code, DENIED);
    let used = usage(&path, "hog");
    assert!(used > QUOTA, "{used}");
    assert_eq!(d.error.message, refusal("hog", used));
    // ... while reads, deletes and drops go through.
    assert_eq!(rows(&b, &c), json!([{"id": 1, "n": 50000}]));
    ok(exec(&b, &c, "DROP INDEX by_b", json!([])));
    ok(exec(&b, &c, "CREATE TABLE more (a)", json!([])));
}

#[tokio::test]
async fn a_plugin_past_its_quota_gets_minus_32003_and_the_operator_an_audit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = AuditLog::memory();
    let db = dir.path().join("kaged.sqlite3");
    let broker = StorageBroker::open(&db).expect("broker").with_quota(QUOTA);
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(EASY).expect("scale"))
            .with_audit(audit.clone())
            .with_storage(Arc::new(BrokerHandler::new(broker))),
    );
    let rw = ["kaged:storage:read", "kaged:storage:write"];
    let s = connect(&host, client("quota-hog", &rw).build().expect("plugin")).await;
    let exec = |sql: &str| json!({ "sql": sql });
    call(&s, "db.exec", exec("CREATE TABLE blobs (b BLOB)")).await;
    let ok = call(
        &s,
        "db.exec",
        exec("INSERT INTO blobs VALUES (zeroblob(30000))"),
    )
    .await;
    assert_eq!(ok, json!({"rows_affected": 1}));
    let refused = call(
        &s,
        "db.exec",
        exec("INSERT INTO blobs VALUES (zeroblob(40000))"),
    )
    .await;
    assert_eq!(
        (&refused["variant"], &refused["code"]),
        (&json!("Denied"), &json!(-32003)),
        "{refused}"
    );
    assert_eq!(
        refused["message"],
        refusal("quota-hog", usage(&db, "quota-hog"))
    );
    let audited = one(&audit, "plugin.storage_denied");
    assert_eq!(audited.data["reason"], "quota");
    assert_eq!(audited.data["method"], "kaged.storage.exec");
    assert_eq!(
        audited.data["sql"],
        "INSERT INTO blobs VALUES (zeroblob(?))"
    );
    let count = call(
        &s,
        "db.raw",
        json!({"sql": "SELECT count(*) AS n FROM blobs"}),
    )
    .await;
    assert_eq!(count["rows"], json!([{"n": 1}]));
    let deleted = call(&s, "db.exec", exec("DELETE FROM blobs")).await;
    assert_eq!(deleted, json!({"rows_affected": 1}));
}
