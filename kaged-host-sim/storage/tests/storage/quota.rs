//! The per-plugin storage quota (`StorageBroker::with_quota`,
//! `--storage-quota`): a write that would take a plugin's tables and
//! indexes past it is refused with `-32003` and a message naming the
//! quota, rolled back, and audited as `plugin.storage_denied` with reason
//! `quota`; reads and deletes keep working so the plugin can clean up.
//! Small quotas keep the tests fast.

use crate::support::storage::*;
use kaged_host_storage::StorageBroker;
use kaged_host_storage::DEFAULT_STORAGE_QUOTA;
use serde_json::{json, Value};

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
