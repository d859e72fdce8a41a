//! `--cage auto|require|off` and `--no-sandbox` on the command line
//! (ADDENDUM §13): every command that runs a plugin says how it ran, and
//! the audit log too. A machine without bwrap is simulated with
//! `KAGED_BWRAP` naming a missing file.

use assert_cmd::Command;
use serde_json::Value;

use crate::support::host::fixture;

fn cli() -> Command {
    let mut c = Command::cargo_bin("kaged-host-sim").expect("binary built");
    c.timeout(std::time::Duration::from_secs(60));
    c
}

fn good_script() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scripts/good.yaml")
}

fn spawned(audit: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(audit)
        .expect("audit file")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("audit line"))
        .filter(|v| v["event"] == "plugin.spawned")
        .collect()
}

/// Whether bwrap cages here (panics under `CI=true` when it cannot).
fn bwrap_works() -> bool {
    kaged_host_core::testing::cage_available_for_blocking("cli caging test")
}

#[test]
fn require_without_bwrap_exits_2_in_one_line() {
    let out = cli()
        .env("KAGED_BWRAP", "/nonexistent/bwrap")
        .args(["--cage", "require", "call"])
        .arg(fixture("good"))
        .arg("status.get")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("--cage require") && err.contains("/nonexistent/bwrap"),
        "{err}"
    );
}

#[test]
fn auto_without_bwrap_warns_and_says_unavailable_everywhere() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let out = cli()
        .env("KAGED_BWRAP", "/nonexistent/bwrap")
        .args(["--time-scale", "0.25", "--audit"])
        .arg(&audit)
        .arg("call")
        .arg(fixture("good"))
        .args(["status.get", "--json"])
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("warning: plugins run UNCAGED"), "{err}");
    assert!(
        err.contains("cage: unavailable, the plugin ran UNCAGED"),
        "{err}"
    );
    // stdout is the answer only.
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON value");
    assert!(v.is_object());
    let s = spawned(&audit);
    assert_eq!(s[0]["cage"], "unavailable");
    assert!(s[0]["cage_id"].is_null());
}

#[test]
fn off_runs_uncaged_and_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let out = cli()
        .args(["--cage", "off", "--time-scale", "0.25", "--audit"])
        .arg(&audit)
        .arg("session")
        .arg(fixture("good"))
        .arg("--script")
        .arg(good_script())
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}{err}");
    assert!(err.contains("--cage off: plugins run UNCAGED"), "{err}");
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.starts_with("cage: off")),
        "{text}"
    );
    assert_eq!(spawned(&audit)[0]["cage"], "off");
}

#[test]
fn sessions_say_caged_and_no_sandbox_is_recorded_but_changes_nothing() {
    if !bwrap_works() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let out = cli()
        .args(["--cage", "require", "--no-sandbox", "--time-scale", "0.25"])
        .arg("--audit")
        .arg(&audit)
        .arg("session")
        .arg(fixture("good"))
        .arg("--script")
        .arg(good_script())
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let first = text.lines().next().unwrap_or_default();
    assert!(first.starts_with("cage: bwrap ("), "{text}");
    assert!(first.contains("network none"), "{first}");
    let lines: Vec<Value> = std::fs::read_to_string(&audit)
        .expect("audit")
        .lines()
        .map(|l| serde_json::from_str(l).expect("line"))
        .collect();
    let spawned: Vec<&Value> = lines
        .iter()
        .filter(|v| v["event"] == "plugin.spawned")
        .collect();
    let ignored: Vec<&Value> = lines
        .iter()
        .filter(|v| v["event"] == "plugin.no_sandbox_ignored")
        .collect();
    assert_eq!(spawned[0]["cage"], "bwrap");
    assert_eq!(ignored.len(), 1);
    assert_eq!(ignored[0]["cage"], "bwrap");
    assert_eq!(ignored[0]["cage_id"], spawned[0]["cage_id"]);
}
