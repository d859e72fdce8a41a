//! The command line, as a user runs it.

use crate::support::host::fixture;
use assert_cmd::Command;
use serde_json::Value;

fn cli() -> Command {
    let mut c = Command::cargo_bin("kaged-host-sim").expect("binary");
    c.timeout(std::time::Duration::from_secs(60));
    c
}

fn scripts(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/scripts")
        .join(name)
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn validate_accepts_a_good_manifest() {
    let out = cli()
        .arg("validate")
        .arg(fixture("good"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("good 1.0.0 is valid"));
}

#[test]
fn validate_rejects_a_missing_manifest_with_exit_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = cli().arg("validate").arg(dir.path()).output().expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("kaged-plugin.yaml"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn call_json_prints_the_result_alone() {
    let audit = tempfile::NamedTempFile::new().expect("tmp");
    let transcript = tempfile::NamedTempFile::new().expect("tmp");
    let out = cli()
        .args(["--time-scale", "1", "call"])
        .arg(fixture("good"))
        .args(["good.echo", r#"{"text":"hi"}"#, "--json"])
        .arg("--audit")
        .arg(audit.path())
        .arg("--transcript")
        .arg(transcript.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_str(stdout(&out).trim()).expect("one JSON value");
    assert_eq!(v["echo"], serde_json::json!({"text": "hi"}));
    // The audit file has ADDENDUM §9 lines.
    let lines: Vec<Value> = std::fs::read_to_string(audit.path())
        .expect("audit")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let events: Vec<&str> = lines.iter().filter_map(|l| l["event"].as_str()).collect();
    assert_eq!(
        events,
        [
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.exited",
            "plugin.stopped"
        ]
    );
    assert!(lines
        .iter()
        .all(|l| l["plugin"] == "good" && l["ts"].is_string()));
    let records: Vec<Value> = std::fs::read_to_string(transcript.path())
        .expect("transcript")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(records[0]["dir"], "host>plugin");
    assert_eq!(records[0]["msg"]["method"], "initialize");
    assert_eq!(records[0]["seq"], 1);
}

#[test]
fn call_json_prints_the_error_object_and_exits_1() {
    let out = cli()
        .args(["call", "--time-scale", "1"])
        .arg(fixture("good"))
        .args(["no.such", "--json"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_str(stdout(&out).trim()).expect("one JSON value");
    assert_eq!(v["code"], -32601);
}

#[test]
fn session_runs_a_scenario() {
    let out = cli()
        .args(["--time-scale", "1", "session"])
        .arg(fixture("good"))
        .arg("--script")
        .arg(scripts("good.yaml"))
        .output()
        .expect("run");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert_eq!(text.matches("step ").count(), 6, "{text}");
    assert!(!text.contains("FAIL"), "{text}");
    assert!(text.contains("6 step(s), 0 failed"));
}

#[test]
fn session_with_a_failed_expectation_exits_1() {
    let out = cli()
        .args(["--time-scale", "1", "session"])
        .arg(fixture("good"))
        .arg("--script")
        .arg(scripts("failing.yaml"))
        .output()
        .expect("run");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("2 step(s), 2 failed"), "{text}");
}

fn assert_usage_error(args: &[&str], mention: &str) {
    let out = cli().args(args).output().expect("run");
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(mention), "{err} should mention {mention}");
}

#[test]
fn bad_usage_is_one_line_and_exit_2() {
    assert_usage_error(&["--bogus"], "--bogus");
    assert_usage_error(&["validate"], "DIR");
    assert_usage_error(&["--time-scale", "2", "validate", "."], "time scale");
    assert_usage_error(&["validate", "/no/such/dir"], "/no/such/dir");
    let good = fixture("good");
    let good = good.to_str().expect("utf-8 path");
    assert_usage_error(&["call", good, "good.echo", "{not json"], "PARAMS_JSON");
    assert_usage_error(&["call", good, "good.echo", "--context", "[]"], "--context");
}

#[test]
fn every_command_has_help() {
    for args in [
        &["--help"][..],
        &["validate", "--help"],
        &["call", "--help"],
        &["session", "--help"],
    ] {
        let out = cli().args(args).output().expect("run");
        assert_eq!(out.status.code(), Some(0));
        assert!(stdout(&out).contains("Usage"), "{args:?}");
    }
}

#[test]
fn a_plugin_failing_its_handshake_is_one_line_and_exit_1() {
    let out = cli()
        .args(["--time-scale", "1", "call"])
        .arg(fixture("name-mismatch"))
        .arg("status.get")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("name mismatch"), "{err}");
    assert!(
        lines[0].contains("someone-else"),
        "the cause chain is included: {err}"
    );
}

/// `kaged-host-sim validate … | head`, `cage … | head`: a closed stdout
/// ends the output without a panic, and the exit status is the command's.
#[test]
fn a_closed_stdout_ends_the_output_without_a_panic() {
    let good = fixture("good");
    for args in [["validate"], ["cage"]] {
        let out = kaged_test_support::command::assert_quiet_on_closed_stdout(
            std::process::Command::new(env!("CARGO_BIN_EXE_kaged-host-sim"))
                .args(args)
                .arg(&good),
        );
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
}
