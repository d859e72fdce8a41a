//! The storage broker: the spec's storage tests (plugin-host.md, Testing
//! notes), ADDENDUM §7 answers, capabilities, params and happy paths.

use crate::support::storage::*;
use kaged_host_storage::StorageBroker;
use kaged_host_storage::StorageClient;
use kaged_plugin_protocol::StorageMethod;
use serde_json::json;

// ---- Testing notes: storage tests -------------------------------------

#[test]
fn create_table_exists_with_the_prefixed_name() {
    let b = broker();
    let c = writer("oh-my-pi");
    let r = ok(exec(
        &b,
        &c,
        "CREATE TABLE IF NOT EXISTS presets (id TEXT PRIMARY KEY, name TEXT, path TEXT, installed_at TEXT)",
        json!([]),
    ));
    assert_eq!(r, json!({"rows_affected": 0}));
    let objects = master(&b);
    assert!(
        objects.contains(&("table".into(), "plugin_oh_my_pi_presets".into())),
        "{objects:?}"
    );
    assert!(!objects.iter().any(|(_, n)| n == "presets"));
    assert_eq!(schema(&b, &c), vec!["presets"]);
}

#[test]
fn cross_schema_access_is_denied() {
    let b = broker();
    seed_victim(&b);
    let a = writer("attacker");
    for sql in [
        "SELECT * FROM plugin_victim_secrets",
        "SELECT * FROM main.plugin_victim_secrets",
        "SELECT * FROM victim.secrets",
    ] {
        let d = query(&b, &a, sql, json!([])).expect_err(sql);
        assert_eq!(d.error.code, DENIED, "{sql}");
        assert!(d.is_access_denial());
        assert!(d.redacted_sql.is_some());
    }
    assert_eq!(
        code(exec(&b, &a, "DELETE FROM plugin_victim_secrets", json!([]))),
        DENIED
    );
}

#[test]
fn ddl_without_write_capability_is_denied() {
    let b = broker();
    let r = reader("ro");
    assert_eq!(code(exec(&b, &r, "CREATE TABLE t (a)", json!([]))), DENIED);
    // The read method does not run DDL or writes either.
    assert_eq!(code(query(&b, &r, "CREATE TABLE t (a)", json!([]))), DENIED);
    assert_eq!(
        code(query(&b, &r, "INSERT INTO t VALUES (1)", json!([]))),
        DENIED
    );
    assert!(schema(&b, &r).is_empty());
    assert!(!master_names(&b).iter().any(|n| n.starts_with("plugin_ro_")));
}

#[test]
fn uninstall_drops_every_prefixed_object_and_keeps_the_others() {
    let b = broker();
    seed_victim(&b);
    let c = writer("oh-my-pi");
    for sql in [
        "CREATE TABLE presets (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE)",
        "CREATE TABLE log (msg TEXT)",
        "CREATE INDEX presets_name ON presets (name)",
        "CREATE VIEW names AS SELECT name FROM presets",
        "CREATE TRIGGER log_insert AFTER INSERT ON presets BEGIN INSERT INTO log VALUES (new.name); END",
    ] {
        ok(exec(&b, &c, sql, json!([])));
    }
    let before = victim_fingerprint(&b);
    let mut dropped = b.uninstall("oh-my-pi").expect("uninstall");
    dropped.sort();
    assert_eq!(
        dropped,
        [
            "plugin_oh_my_pi_log",
            "plugin_oh_my_pi_log_insert",
            "plugin_oh_my_pi_names",
            "plugin_oh_my_pi_presets",
            "plugin_oh_my_pi_presets_name",
        ]
    );
    let names = master_names(&b);
    assert!(!names.iter().any(|n| n.contains("oh-my-pi")), "{names:?}");
    assert!(names.contains(&"plugin_victim_secrets".to_string()));
    assert_eq!(victim_fingerprint(&b), before);
    assert!(schema(&b, &c).is_empty());
    // The plugin can start over after a reinstall.
    ok(exec(&b, &c, "CREATE TABLE presets (id)", json!([])));
    assert_eq!(schema(&b, &c), vec!["presets"]);
}

// ---- Capabilities -------------------------------------------------------

#[test]
fn capabilities_gate_every_method() {
    let b = broker();
    let w = writer("w");
    ok(exec(&b, &w, "CREATE TABLE t (a)", json!([])));
    let none = StorageClient::new("w", false, false);
    let unavailable = StorageClient {
        storage_available: false,
        ..writer("w")
    };
    for c in [&none, &unavailable] {
        assert_eq!(code(query(&b, c, "SELECT * FROM t", json!([]))), DENIED);
        assert_eq!(
            code(exec(&b, c, "INSERT INTO t VALUES (1)", json!([]))),
            DENIED
        );
        assert_eq!(code(b.handle(c, StorageMethod::Schema, None)), DENIED);
    }
    let r = reader("w");
    assert_eq!(
        code(exec(&b, &r, "INSERT INTO t VALUES (1)", json!([]))),
        DENIED
    );
    assert_eq!(
        ok(query(&b, &r, "SELECT count(*) AS n FROM t", json!([])))["rows"][0]["n"],
        0
    );
    // write implies read
    let write_only = StorageClient::new("w", false, true);
    assert_eq!(
        ok(query(
            &b,
            &write_only,
            "SELECT count(*) AS n FROM t",
            json!([])
        ))["rows"][0]["n"],
        0
    );
    let from_caps = StorageClient::from_capabilities("w", ["net:[]", "kaged:storage:read"], true);
    assert!(from_caps.may_read() && !from_caps.may_write());
    let bad_name = writer("Bad\"Name");
    assert_eq!(
        code(exec(&b, &bad_name, "CREATE TABLE t (a)", json!([]))),
        DENIED
    );
}

// ---- Params (ADDENDUM §7) ------------------------------------------------

#[test]
fn malformed_params_are_invalid_params() {
    let b = broker();
    let w = writer("p");
    ok(exec(&b, &w, "CREATE TABLE t (a)", json!([])));
    for params in [
        None,
        Some(json!([])),
        Some(json!({"params": []})),
        Some(json!({"sql": 42})),
        Some(json!({"sql": "INSERT INTO t VALUES (?)", "params": {"a": 1}})),
        Some(json!({"sql": "INSERT INTO t VALUES (?)", "params": [[1]]})),
        Some(json!({"sql": "INSERT INTO t VALUES (?)", "params": [{"x": 1}]})),
        Some(json!({"sql": "INSERT INTO t VALUES (?)", "params": [1, 2]})),
        Some(json!({"sql": "INSERT INTO", "params": []})),
        Some(json!({"sql": "", "params": []})),
    ] {
        let d = b
            .handle(&w, StorageMethod::Exec, params.clone())
            .expect_err("must fail");
        assert_eq!(d.error.code, INVALID, "{params:?}: {d}");
        assert!(!d.is_access_denial());
    }
    // `params` may be omitted when there are none.
    let r = b.handle(
        &w,
        StorageMethod::Query,
        Some(json!({"sql": "SELECT count(*) AS n FROM t"})),
    );
    assert_eq!(ok(r)["rows"][0]["n"], 0);
}

#[test]
fn values_round_trip_as_documented() {
    let b = broker();
    let w = writer("vals");
    ok(exec(
        &b,
        &w,
        "CREATE TABLE v (i INTEGER, r REAL, t TEXT, n, bl BLOB, b INTEGER)",
        json!([]),
    ));
    let r = ok(exec(
        &b,
        &w,
        "INSERT INTO v (i, r, t, n, bl, b) VALUES (?, ?, ?, ?, X'666F6F', ?)",
        json!([42, 1.5, "héllo", null, true]),
    ));
    assert_eq!(r, json!({"rows_affected": 1}));
    ok(exec(
        &b,
        &w,
        "INSERT INTO v (i, r) VALUES (?1, 9e999 * ?1)",
        json!([false]),
    ));
    let q = ok(query(
        &b,
        &w,
        "SELECT i, r, t, n, bl, b FROM v ORDER BY rowid",
        json!([]),
    ));
    assert_eq!(q["columns"], json!(["i", "r", "t", "n", "bl", "b"]));
    assert_eq!(
        q["rows"][0],
        json!({"i": 42, "r": 1.5, "t": "héllo", "n": null, "bl": {"$base64": "Zm9v"}, "b": 1})
    );
    // REAL infinity (9e999 * 0 is NaN -> NULL in SQLite) comes back as null.
    assert_eq!(q["rows"][1]["i"], 0);
    assert_eq!(q["rows"][1]["r"], json!(null));
    let inf = ok(query(&b, &w, "SELECT 9e999 AS x", json!([])));
    assert_eq!(inf["rows"][0]["x"], json!(null));
}

#[test]
fn sql_errors_come_back_unprefixed() {
    let b = broker();
    let w = writer("oh-my-pi");
    ok(exec(
        &b,
        &w,
        "CREATE TABLE presets (id TEXT PRIMARY KEY)",
        json!([]),
    ));
    ok(exec(&b, &w, "INSERT INTO presets VALUES ('a')", json!([])));
    let d = exec(&b, &w, "INSERT INTO presets VALUES ('a')", json!([])).expect_err("dup");
    assert_eq!(d.error.code, INVALID);
    assert!(
        d.error.message.contains("presets.id"),
        "{}",
        d.error.message
    );
    assert!(!d.error.message.contains("plugin_"), "{}", d.error.message);
    let d = query(&b, &w, "SELECT * FROM missing", json!([])).expect_err("missing");
    assert!(
        d.error.message.contains("missing") && !d.error.message.contains("plugin_"),
        "{}",
        d.error.message
    );
    // Column names derived from expressions do not leak the prefix either.
    let q = ok(query(
        &b,
        &w,
        "SELECT (SELECT count(*) FROM presets)",
        json!([]),
    ));
    assert!(!q.to_string().contains("plugin_"), "{q}");
}

#[test]
fn exec_is_atomic() {
    let b = broker();
    let w = writer("atomic");
    ok(exec(
        &b,
        &w,
        "CREATE TABLE t (id INTEGER PRIMARY KEY)",
        json!([]),
    ));
    ok(exec(&b, &w, "INSERT INTO t VALUES (1), (2)", json!([])));
    // `OR FAIL` makes SQLite itself keep the rows a failing statement wrote
    // before the conflict (row 3 here): only the broker's transaction,
    // rolled back on the error, takes row 3 away again.
    assert_eq!(
        code(exec(
            &b,
            &w,
            "INSERT OR FAIL INTO t VALUES (3), (1)",
            json!([])
        )),
        INVALID
    );
    let q = ok(query(&b, &w, "SELECT id FROM t ORDER BY id", json!([])));
    assert_eq!(q["rows"], json!([{"id": 1}, {"id": 2}]));
    // The same holds for a failing trigger: its `RAISE(FAIL)` keeps what
    // the statement wrote before (row 4 and its log line) in SQLite.
    ok(exec(&b, &w, "CREATE TABLE log (msg TEXT)", json!([])));
    ok(exec(
        &b,
        &w,
        "CREATE TRIGGER no_nines BEFORE INSERT ON t WHEN new.id = 9 \
         BEGIN SELECT RAISE(FAIL, 'no nines'); END",
        json!([]),
    ));
    ok(exec(
        &b,
        &w,
        "CREATE TRIGGER logged AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.id); END",
        json!([]),
    ));
    assert_eq!(
        code(exec(&b, &w, "INSERT INTO t VALUES (4), (9)", json!([]))),
        INVALID
    );
    let q = ok(query(&b, &w, "SELECT id FROM t ORDER BY id", json!([])));
    assert_eq!(q["rows"], json!([{"id": 1}, {"id": 2}]));
    let q = ok(query(&b, &w, "SELECT count(*) AS n FROM log", json!([])));
    assert_eq!(q["rows"][0]["n"], 0);
}

#[test]
fn runaway_statements_are_interrupted() {
    let b = StorageBroker::open_temp()
        .expect("open")
        .with_time_budget(std::time::Duration::from_millis(200));
    let w = writer("slow");
    let sql =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
    let d = query(&b, &w, sql, json!([])).expect_err("interrupted");
    assert_eq!(d.error.code, -32603);
    // Counting a CTE is fine when it terminates.
    let v = ok(query(
        &b,
        &w,
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5) SELECT count(*) AS n FROM c",
        json!([]),
    ));
    assert_eq!(v["rows"][0]["n"], 5);
    // The connection is usable afterwards.
    assert_eq!(
        ok(query(&b, &w, "SELECT 1 AS one", json!([])))["rows"][0]["one"],
        1
    );
}

#[test]
fn the_broker_reopens_a_persistent_file() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("db.sqlite3");
    {
        let b = StorageBroker::open(&path).expect("open");
        ok(exec(
            &b,
            &writer("foo"),
            "CREATE TABLE bar_x (a)",
            json!([]),
        ));
    }
    let b = StorageBroker::open(&path).expect("reopen");
    // Ownership survives: `foo-bar`'s `x` is the same physical name
    // (`plugin_foo_bar_x`, the spec's prefix) and the registry keeps it
    // `foo`'s, refused to `foo-bar` without naming `foo`.
    assert_eq!(b.owner_of("plugin_foo_bar_x").as_deref(), Some("foo"));
    let refused = query(&b, &writer("foo-bar"), "SELECT * FROM x", json!([])).expect_err("refused");
    assert_eq!(refused.error.code, -32003);
    assert_eq!(
        refused.error.message,
        "storage access denied: `x` is not one of this plugin's tables"
    );
    assert_eq!(schema(&b, &writer("foo")), vec!["bar_x"]);
    assert!(schema(&b, &writer("foo-bar")).is_empty());
}

#[test]
fn denials_carry_redacted_sql_for_the_audit_log() {
    let b = broker();
    let a = writer("attacker");
    let d = query(
        &b,
        &a,
        "SELECT * FROM plugin_victim_secrets WHERE secret = 'hunter2' AND id > 41 /* 007 */",
        json!([]),
    )
    .expect_err("denied");
    assert!(d.is_access_denial());
    assert_eq!(
        d.redacted_sql.as_deref(),
        Some("SELECT * FROM plugin_victim_secrets WHERE secret = ? AND id > ?")
    );
    assert!(d.reason.contains("plugin_victim_secrets"), "{}", d.reason);
    // A capability denial carries the SQL too; schema calls have none.
    let d = exec(&b, &reader("r"), "DELETE FROM t WHERE pw = 'x'", json!([])).expect_err("denied");
    assert_eq!(
        d.redacted_sql.as_deref(),
        Some("DELETE FROM t WHERE pw = ?")
    );
    let none = StorageClient::new("r", false, false);
    let d = b
        .handle(&none, StorageMethod::Schema, None)
        .expect_err("denied");
    assert_eq!(d.redacted_sql, None);
}

#[test]
fn concurrent_plugins_share_one_database() {
    let b = std::sync::Arc::new(broker());
    for name in ["p-a", "p-b", "p-c"] {
        ok(exec(
            &b,
            &writer(name),
            "CREATE TABLE n (i INTEGER)",
            json!([]),
        ));
    }
    let threads: Vec<_> = ["p-a", "p-b", "p-c", "p-a"]
        .into_iter()
        .map(|name| {
            let b = std::sync::Arc::clone(&b);
            std::thread::spawn(move || {
                for i in 0..25 {
                    ok(exec(
                        &b,
                        &writer(name),
                        "INSERT INTO n (i) VALUES (?)",
                        json!([i]),
                    ));
                    ok(query(
                        &b,
                        &writer(name),
                        "SELECT count(*) FROM n",
                        json!([]),
                    ));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    let count = |name: &str| {
        ok(query(
            &b,
            &writer(name),
            "SELECT count(*) AS c FROM n",
            json!([]),
        ))["rows"][0]["c"]
            .clone()
    };
    assert_eq!(count("p-a"), 50);
    assert_eq!(count("p-b"), 25);
    assert_eq!(count("p-c"), 25);
}

#[test]
fn engine_limits_bound_values_and_attachments() {
    let b = broker();
    let w = writer("big");
    let d =
        query(&b, &w, "SELECT length(zeroblob(100000000)) AS n", json!([])).expect_err("too big");
    assert_eq!(d.error.code, INVALID, "{d}");
    assert_eq!(
        ok(query(
            &b,
            &w,
            "SELECT length(zeroblob(1000)) AS n",
            json!([])
        ))["rows"][0]["n"],
        1000
    );
    let d = query(&b, &w, "SELECT 1 AS \"a\0b\"", json!([])).expect_err("NUL");
    assert_eq!(d.error.code, INVALID, "{d}");
}
