//! `kaged-host-sim session --project ...` with start_session, idle and
//! compact steps, run as a real command against real plugin processes.

use std::process::Output;

use crate::support::firing::{fixtures, FIXTURES};
use assert_cmd::Command;
use kaged_host_core::group_alive;
use kaged_test_support::command::assert_success;
use serde_json::Value;

fn cli() -> Command {
    Command::cargo_bin("kaged-host-sim").expect("binary built")
}

fn session(script: &str, extra: &[&str], audit: &std::path::Path) -> Output {
    let mut cmd = cli();
    cmd.args(["--time-scale", "1", "--audit"])
        .arg(audit)
        .arg("session")
        .arg("--project")
        .arg(fixtures().join("projects/firing-compact.yaml"))
        .arg("--script")
        .arg(fixtures().join("scripts").join(script));
    for name in FIXTURES {
        let dir = crate::support::host::fixture(name);
        cmd.arg("--plugin")
            .arg(format!("@kaged/{name}={}", dir.display()));
    }
    cmd.args(extra).output().expect("run")
}

/// Every plugin the audit file says was spawned is gone.
fn assert_nothing_running(audit: &std::path::Path) {
    let text = std::fs::read_to_string(audit).expect("audit file");
    let mut spawned = 0;
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).expect("audit line");
        if v["event"] == "plugin.spawned" {
            spawned += 1;
            let pid = v["pid"].as_u64().expect("pid") as u32;
            assert!(!group_alive(pid), "process group {pid} still has members");
        }
    }
    assert!(spawned > 0, "no plugin.spawned in {text}");
}

#[test]
fn project_scenario_prints_each_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let out = session("firing-compact.yaml", &[], &audit);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}\n{err}");
    assert!(
        text.contains("step 1: ok   start_session primary -> 2 inject(s)"),
        "{text}"
    );
    assert!(
        text.contains("step 3: ok   compact primary -> 3 message(s)"),
        "{text}"
    );
    assert!(text.contains("5 step(s), 0 failed"), "{text}");
    assert_nothing_running(&audit);
}

#[test]
fn project_scenario_as_json() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let out = session("firing-compact.yaml", &["--json"], &audit);
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0]["step"], "start_session");
    assert_eq!(
        lines[0]["system_prompt_prefix"],
        "<plugin:hooks-observer>\nobserver ready (tag=primary)\n</plugin:hooks-observer>\n\
         <plugin:hooks-greeter>\ngreetings from greeter\n</plugin:hooks-greeter>"
    );
    assert_eq!(lines[2]["step"], "compact");
    let ids: Vec<&str> = lines[2]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(ids, ["summary_1", "k1", "m3"]);
    assert_eq!(lines[3]["applied"], "drop");
    assert!(lines.iter().take(5).all(|l| l["ok"] == true));
    assert_eq!(lines[5]["summary"]["failed"], 0);
    assert_nothing_running(&audit);
}

#[test]
fn failed_project_steps_exit_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let out = session("firing-failing.yaml", &[], &audit);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("step 2: FAIL"), "{text}");
    assert!(text.contains("unknown agent path"), "{text}");
    assert!(text.contains("2 step(s), 2 failed"), "{text}");
    assert_nothing_running(&audit);
}

#[test]
fn project_usage_errors_exit_2() {
    let project = fixtures().join("projects/firing-compact.yaml");
    let script = fixtures().join("scripts/firing-compact.yaml");
    // No plugin source.
    let out = cli()
        .arg("session")
        .arg("--project")
        .arg(&project)
        .arg("--script")
        .arg(&script)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--plugins"));
    // Project steps without --project.
    let out = cli()
        .arg("session")
        .arg(crate::support::host::fixture("hooks-greeter"))
        .arg("--script")
        .arg(&script)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--project"));
}

#[test]
fn a_plugin_that_cannot_launch_is_named_and_the_others_run() {
    // Spec Spawn: failed plugins do not block startup. The command line says
    // which plugin failed, and the scenario still runs on the others.
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("project.yaml");
    std::fs::write(
        &project,
        "primary:\n  plugins:\n    hooks-observer:\n      package: \"@kaged/hooks-observer\"\n\
         \x20   missing-command:\n      package: \"@kaged/missing-command\"\n",
    )
    .expect("write project");
    let script = dir.path().join("script.yaml");
    std::fs::write(
        &script,
        "steps:\n  - start_session: primary\n    session_id: ses_failed\n    expect:\n      result:\n        system_prompt_prefix: \"<plugin:hooks-observer>\\nobserver ready (tag=-)\\n</plugin:hooks-observer>\"\n",
    )
    .expect("write script");
    let audit = dir.path().join("audit.jsonl");
    let mut cmd = cli();
    cmd.args(["--time-scale", "0.2", "--audit"])
        .arg(&audit)
        .args(["session", "--project"])
        .arg(&project)
        .arg("--script")
        .arg(&script);
    for name in ["hooks-observer", "missing-command"] {
        let plugin = crate::support::host::fixture(name);
        cmd.arg("--plugin")
            .arg(format!("@kaged/{name}={}", plugin.display()));
    }
    let out = cmd.output().expect("run");
    assert_success("the session", &out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warning = stderr
        .lines()
        .find(|l| l.contains("plugin missing-command"))
        .unwrap_or_else(|| panic!("no warning naming the failed plugin:\n{stderr}"));
    assert!(
        warning.starts_with("kaged-host-sim: warning: plugin missing-command (")
            && warning.contains("failed to launch; its hooks are not fired: "),
        "{warning}"
    );
    assert_nothing_running(&audit);
}

#[test]
fn a_malformed_hook_answer_fails_its_step_naming_plugin_hook_and_why() {
    // The host treats a malformed answer as null and audits it: the step
    // that fired it fails, not "ok ... 0 retained" (issue 46).
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("project.yaml");
    std::fs::write(
        &project,
        "primary:\n  plugins:\n    bad:\n      package: \"@kaged/hooks-malformed\"\n",
    )
    .expect("write project");
    let script = dir.path().join("script.yaml");
    std::fs::write(
        &script,
        "steps:\n  - compact: primary\n    messages_being_compacted: [{id: m1, role: user, content: old}]\n    messages_remaining: [{id: m2, role: user, content: new}]\n",
    )
    .expect("write script");
    let audit = dir.path().join("audit.jsonl");
    let plugin = crate::support::host::fixture("hooks-malformed");
    let out = cli()
        .args(["--time-scale", "0.2", "--audit"])
        .arg(&audit)
        .args(["session", "--project"])
        .arg(&project)
        .arg("--script")
        .arg(&script)
        .arg("--plugin")
        .arg(format!("@kaged/hooks-malformed={}", plugin.display()))
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("step 1:"))
        .unwrap_or_default();
    assert!(
        line.contains("FAIL")
            && line.contains("hooks-malformed answered pre_compact with a malformed answer"),
        "{stdout}"
    );
    assert_nothing_running(&audit);
}

#[test]
fn a_plugin_session_hook_call_with_a_malformed_answer_fails_its_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("script.yaml");
    std::fs::write(
        &script,
        "steps:\n  - call: kaged.hook.pre_compact\n    params: {role: observer, strategy: drop, trigger: threshold_crossed, messages_being_compacted: [], messages_remaining: []}\n    context: {operator_id: operator, project_id: p, agent_path: primary, session_id: s1, request_id: r1}\n",
    )
    .expect("write script");
    let out = cli()
        .args(["--time-scale", "0.2", "session"])
        .arg(crate::support::host::fixture("hooks-malformed"))
        .arg("--script")
        .arg(&script)
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("step 1: FAIL call kaged.hook.pre_compact -> {\"retain\":\"not a list\"}: a malformed hook answer"),
        "{stdout}"
    );
}
