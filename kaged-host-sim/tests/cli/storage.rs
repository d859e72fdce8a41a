//! `--storage-db` and `kaged-host-sim storage tables|uninstall`, run as a
//! user runs them, against the `storage-relay` fixture plugins (which relay
//! `sql.*` calls to `kaged.storage.*`): plugin-host.md § "Plugin-scoped
//! storage" (create table, cleanup on uninstall) through the command line.

use crate::storage_cli::*;
use serde_json::{json, Value};

#[test]
fn storage_db_persists_and_uninstall_drops_only_that_plugins_objects() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("kaged.sqlite3");
    let audit = dir.path().join("audit.jsonl");
    // storage-relay and storage-relay-x look alike (under the spec's
    // `-` → `_` prefix the first's was a prefix of the second's):
    // uninstalling the first must leave the second alone.
    for s in [
        "CREATE TABLE presets (id INTEGER PRIMARY KEY, name TEXT)",
        "CREATE INDEX presets_by_name ON presets (name)",
        "CREATE VIEW web AS SELECT name FROM presets WHERE name LIKE 'web%'",
        "INSERT INTO presets (name) VALUES ('web-dev'), ('cli')",
    ] {
        exec_ok(&db, &audit, "storage-relay", s);
    }
    for s in [
        "CREATE TABLE things (id INTEGER PRIMARY KEY, what TEXT)",
        "INSERT INTO things (what) VALUES ('kept')",
    ] {
        exec_ok(&db, &audit, "storage-relay-x", s);
    }
    // A later process reads what an earlier one wrote.
    let (v, code) = sql(
        Some(&db),
        &audit,
        "storage-relay",
        "sql.query",
        "SELECT name FROM web",
    );
    assert_eq!((code, &v["rows"]), (0, &json!([{"name": "web-dev"}])));
    let (v, code) = sql(
        Some(&db),
        &audit,
        "storage-relay-x",
        "sql.query",
        "SELECT * FROM presets",
    );
    assert_eq!(code, 1);
    assert_eq!(
        v["code"], -32602,
        "another plugin's table does not exist for it: {v}"
    );

    let v = json_out(&storage(
        Some(&db),
        &["tables", "storage-relay", "--json"],
        None,
    ));
    assert_eq!(v, json!({"plugin": "storage-relay", "tables": ["presets"]}));
    let out = storage(Some(&db), &["tables", "storage-relay-x"], None);
    assert_eq!(stdout(&out), "things\n");

    let v = json_out(&storage(
        Some(&db),
        &["uninstall", "storage-relay", "--json"],
        Some(&audit),
    ));
    assert_eq!(
        v["dropped"],
        json!([
            {"type": "view", "name": "plugin_storage_relay_web"},
            {"type": "index", "name": "plugin_storage_relay_presets_by_name"},
            {"type": "table", "name": "plugin_storage_relay_presets"},
        ])
    );
    let uninstalled: Vec<Value> = audit_lines(&audit)
        .into_iter()
        .filter(|l| l["event"] == "plugin.uninstalled")
        .collect();
    assert_eq!(uninstalled.len(), 1, "{uninstalled:?}");
    assert_eq!(uninstalled[0]["plugin"], "storage-relay");
    assert_eq!(
        uninstalled[0]["dropped_tables"].as_array().map(Vec::len),
        Some(3)
    );

    // Gone for the plugin, for the CLI and in the file; the other plugin's
    // table and row are untouched.
    let out = storage(Some(&db), &["tables", "storage-relay"], None);
    assert_eq!((out.status.code(), stdout(&out)), (Some(0), String::new()));
    let (v, _) = sql(Some(&db), &audit, "storage-relay", "sql.schema", "");
    assert_eq!(v, json!({"tables": []}));
    let (v, _) = sql(
        Some(&db),
        &audit,
        "storage-relay-x",
        "sql.query",
        "SELECT what FROM things",
    );
    assert_eq!(v["rows"], json!([{"what": "kept"}]));
    let objects = catalogue(&db);
    assert!(
        objects
            .iter()
            .all(|(_, n)| !n.starts_with("plugin_storage_relay_")
                || n == "plugin_storage_relay_x_things"),
        "{objects:?}"
    );
    assert!(objects.contains(&("table".into(), "plugin_storage_relay_x_things".into())));
    // Uninstalling again drops nothing and still succeeds.
    let out = storage(Some(&db), &["uninstall", "storage-relay"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "storage-relay: 0 storage object(s) dropped\n");
    assert_nothing_running(&audit);
}

#[test]
fn uninstall_prints_what_was_dropped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("kaged.sqlite3");
    let audit = dir.path().join("audit.jsonl");
    exec_ok(
        &db,
        &audit,
        "storage-relay",
        "CREATE TABLE notes (body TEXT)",
    );
    let out = storage(Some(&db), &["uninstall", "storage-relay"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "dropped table plugin_storage_relay_notes (notes)\nstorage-relay: 1 storage object(s) dropped\n"
    );
}

#[test]
fn without_storage_db_every_run_gets_a_fresh_temporary_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let (v, code) = sql(
        None,
        &audit,
        "storage-relay",
        "sql.exec",
        "CREATE TABLE t (x)",
    );
    assert_eq!((code, v), (0, json!({"rows_affected": 0})));
    let (v, code) = sql(
        None,
        &audit,
        "storage-relay",
        "sql.query",
        "SELECT * FROM t",
    );
    assert_eq!((code, &v["code"]), (1, &json!(-32602)), "{v}");
    // initialize said storage was available.
    let out = cli()
        .args(["--time-scale", "1", "call"])
        .arg(fixture("storage-relay"))
        .args(["sql.schema", "{}", "--json"])
        .output()
        .expect("run");
    assert_eq!(json_out(&out), json!({"tables": []}));
    assert_nothing_running(&audit);
}

#[test]
fn storage_quota_limits_each_plugins_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("kaged.sqlite3");
    let audit = dir.path().join("audit.jsonl");
    exec_ok(&db, &audit, "storage-relay", "CREATE TABLE blobs (b BLOB)");
    let write = |quota: &str| {
        let params = json!({"sql": "INSERT INTO blobs VALUES (zeroblob(20000))", "params": []});
        let out = cli()
            .args(["--time-scale", "1", "--audit"])
            .arg(&audit)
            .arg("--storage-db")
            .arg(&db)
            .args(["--storage-quota", quota, "call"])
            .arg(fixture("storage-relay"))
            .args(["sql.exec", &params.to_string(), "--json"])
            .output()
            .expect("run");
        let v: Value = serde_json::from_str(stdout(&out).trim()).unwrap_or(Value::Null);
        (v, out.status.code())
    };
    let (v, code) = write("16384");
    assert_eq!((code, &v["code"]), (Some(1), &json!(-32003)), "{v}");
    let message = v["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("storage quota of 16384 bytes exceeded for plugin storage-relay: "),
        "{v}"
    );
    let denied: Vec<Value> = audit_lines(&audit)
        .into_iter()
        .filter(|l| l["event"] == "plugin.storage_denied")
        .collect();
    assert_eq!(denied.len(), 1, "{denied:?}");
    assert_eq!(denied[0]["reason"], "quota");
    // Not kept; with a larger quota the same write goes through.
    let (v, _) = sql(
        Some(&db),
        &audit,
        "storage-relay",
        "sql.query",
        "SELECT count(*) AS n FROM blobs",
    );
    assert_eq!(v["rows"], json!([{"n": 0}]));
    let (v, code) = write("1048576");
    assert_eq!((code, &v["rows_affected"]), (Some(0), &json!(1)), "{v}");
}
