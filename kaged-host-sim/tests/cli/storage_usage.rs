//! `--storage-db` reaches `session` (single plugin and `--project`), and
//! the `storage` command's usage errors and help.

use std::path::Path;

use crate::storage_cli::*;
use serde_json::{json, Value};

#[test]
fn session_scripts_and_project_sessions_use_the_storage_db() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("kaged.sqlite3");
    let audit = dir.path().join("audit.jsonl");
    let script = dir.path().join("script.yaml");
    std::fs::write(
        &script,
        r#"steps:
  - call: sql.exec
    params: {sql: "CREATE TABLE presets (name TEXT)", params: []}
  - call: sql.exec
    params: {sql: "INSERT INTO presets VALUES (?)", params: [web-dev]}
    expect: {result: {rows_affected: 1}}
  - call: sql.query
    params: {sql: "SELECT name FROM presets", params: []}
    expect: {result: {rows: [{name: web-dev}]}}
  - call: sql.query
    params: {sql: "SELECT * FROM sqlite_master", params: []}
    expect: {error: -32003}
  - expect_audit: plugin.storage_denied
"#,
    )
    .expect("write script");
    let out = cli()
        .args(["--time-scale", "1", "--storage-db"])
        .arg(&db)
        .arg("--audit")
        .arg(&audit)
        .arg("session")
        .arg(fixture("storage-relay"))
        .arg("--script")
        .arg(&script)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("5 step(s), 0 failed"),
        "{}",
        stdout(&out)
    );

    // The project form: the relay's on_session_start hook counts sessions
    // in its own table.
    let project = dir.path().join("project.yaml");
    std::fs::write(
        &project,
        "primary:\n  plugins:\n    relay:\n      package: \"@kaged/storage-relay\"\n",
    )
    .expect("write project");
    let steps = dir.path().join("steps.yaml");
    std::fs::write(
        &steps,
        "steps:\n  - start_session: primary\n    session_id: ses_1\n  - start_session: primary\n    session_id: ses_2\n",
    )
    .expect("write steps");
    let out = cli()
        .args(["--time-scale", "1", "--storage-db"])
        .arg(&db)
        .arg("--audit")
        .arg(&audit)
        .arg("session")
        .arg("--project")
        .arg(&project)
        .arg("--plugin")
        .arg(format!(
            "@kaged/storage-relay={}",
            fixture("storage-relay").display()
        ))
        .arg("--script")
        .arg(&steps)
        .arg("--json")
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(
        lines[1]["injects"][0]["inject"],
        "<plugin:storage-relay>\nsessions seen: 2\n</plugin:storage-relay>"
    );
    let v = json_out(&storage(
        Some(&db),
        &["tables", "storage-relay", "--json"],
        None,
    ));
    assert_eq!(v["tables"], json!(["presets", "sessions"]));
    assert_nothing_running(&audit);
}

fn assert_usage_error(db: Option<&Path>, args: &[&str], mention: &str) {
    let out = storage(db, args, None);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(mention), "{err} should mention {mention}");
}

#[test]
fn storage_command_errors_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.sqlite3");
    assert_usage_error(None, &["tables", "oh-my-pi"], "--storage-db");
    assert_usage_error(None, &["uninstall", "oh-my-pi"], "--storage-db");
    assert_usage_error(
        Some(&missing),
        &["uninstall", "oh-my-pi"],
        "missing.sqlite3",
    );
    assert!(!missing.exists(), "a missing database is not created");
    assert_usage_error(Some(&missing), &["tables", "Oh_My_Pi"], "Oh_My_Pi");
    assert_usage_error(Some(&missing), &["uninstall"], "NAME");
    assert_usage_error(Some(&missing), &["drop", "x"], "drop");
    // --storage-db in a directory that does not exist, for call.
    let out = cli()
        .arg("--storage-db")
        .arg(dir.path().join("no/such/dir/db.sqlite3"))
        .arg("call")
        .arg(fixture("storage-relay"))
        .arg("sql.schema")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("cannot open storage database"), "{err}");
}

#[test]
fn storage_commands_have_help() {
    for args in [
        &["storage", "--help"][..],
        &["storage", "tables", "--help"],
        &["storage", "uninstall", "--help"],
    ] {
        let out = cli().args(args).output().expect("run");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let text = stdout(&out);
        assert!(text.contains("Usage"), "{args:?}: {text}");
        assert!(text.contains("--storage-db"), "{args:?}: {text}");
    }
}
