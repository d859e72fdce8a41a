//! Helpers of the storage command-line tests (`tests/cli/storage*.rs`):
//! run `kaged-host-sim` with `--storage-db` against the `storage-relay`
//! fixture plugins.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use kaged_host_core::group_alive;
use serde_json::{json, Value};

/// `tests/fixtures/plugins/NAME`, staged (see [`crate::support::host::plugins_root`]).
pub fn fixture(name: &str) -> PathBuf {
    crate::support::host::fixture(name)
}

pub fn cli() -> Command {
    let mut c = Command::cargo_bin("kaged-host-sim").expect("binary");
    c.timeout(std::time::Duration::from_secs(60));
    c
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `call PLUGIN METHOD {"sql", "params"} --json` with the given database
/// (or none) and audit file; the printed JSON and the exit code.
pub fn sql(db: Option<&Path>, audit: &Path, plugin: &str, method: &str, sql: &str) -> (Value, i32) {
    let mut cmd = cli();
    cmd.args(["--time-scale", "1", "--audit"]).arg(audit);
    if let Some(db) = db {
        cmd.arg("--storage-db").arg(db);
    }
    let params = json!({"sql": sql, "params": []}).to_string();
    let out = cmd
        .arg("call")
        .arg(fixture(plugin))
        .args([method, &params, "--json"])
        .output()
        .expect("run");
    let v = serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("{sql}: {e}: {}{}", stdout(&out), stderr(&out)));
    (v, out.status.code().unwrap_or(-1))
}

#[track_caller]
pub fn exec_ok(db: &Path, audit: &Path, plugin: &str, statement: &str) {
    let (v, code) = sql(Some(db), audit, plugin, "sql.exec", statement);
    assert_eq!(code, 0, "{statement}: {v}");
    assert!(v["rows_affected"].is_u64(), "{statement}: {v}");
}

pub fn storage(db: Option<&Path>, args: &[&str], audit: Option<&Path>) -> Output {
    let mut cmd = cli();
    cmd.arg("storage").args(args);
    if let Some(db) = db {
        cmd.arg("--storage-db").arg(db);
    }
    if let Some(a) = audit {
        cmd.arg("--audit").arg(a);
    }
    cmd.output().expect("run")
}

pub fn json_out(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_str(stdout(o).trim()).expect("one JSON object")
}

pub fn audit_lines(audit: &Path) -> Vec<Value> {
    std::fs::read_to_string(audit)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("audit line"))
        .collect()
}

/// Every plugin the audit file says was spawned is gone.
pub fn assert_nothing_running(audit: &Path) {
    let spawned: Vec<u32> = audit_lines(audit)
        .iter()
        .filter(|v| v["event"] == "plugin.spawned")
        .map(|v| v["pid"].as_u64().expect("pid") as u32)
        .collect();
    assert!(!spawned.is_empty(), "nothing was spawned");
    for pid in spawned {
        assert!(!group_alive(pid), "process group {pid} still has members");
    }
}

/// Every object of the database file, as `(type, name)`, read directly.
pub fn catalogue(db: &Path) -> Vec<(String, String)> {
    let conn = rusqlite::Connection::open(db).expect("open");
    let mut stmt = conn
        .prepare(
            "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .expect("prepare");
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query");
    rows.collect::<Result<_, _>>().expect("rows")
}
