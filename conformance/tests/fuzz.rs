//! `kaged-conformance fuzz` (issue 20): planted bugs a single probe misses
//! are found and shrunk, the shrunk sequence replays as a `kaged-host-sim
//! session` script without the fuzzer, and a conforming plugin runs clean.

mod support;

use kaged_host_sim::scenario::{run_steps, Script};
use kaged_host_sim::{AuditLog, HostConfig, HostSim};
use serde_json::Value;
use support::{cmd, own_fixture};

/// `fuzz` with a seed, as JSON; the exit status and the report.
fn fuzz(dir: &std::path::Path, extra: &[&str]) -> (Option<i32>, Value, tempfile::TempDir) {
    let out = tempfile::tempdir().expect("tempdir");
    let o = cmd()
        .args([
            "fuzz",
            "--seed",
            "3",
            "--time-scale",
            "0.1",
            "--format",
            "json",
            "--out",
        ])
        .arg(out.path())
        .args(extra)
        .arg(dir)
        .output()
        .expect("runs");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code(), report, out)
}

fn case<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["cases"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == id))
        .unwrap_or_else(|| panic!("no case {id} in {report}"))
}

#[test]
fn a_crash_on_an_empty_array_is_found_shrunk_and_replays_without_the_fuzzer() {
    let dir = own_fixture("fuzz-empty-array");
    let (code, report, out) = fuzz(&dir, &["--duration", "30s", "--soak", "0"]);
    assert_eq!(code, Some(1));
    let c = case(&report, "fuzz.no_crash");
    assert_eq!(c["status"], "fail", "{c}");
    let detail = c["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains(r#"fuzz-empty-array.mean {"values":[]}"#),
        "{detail}"
    );
    assert!(
        detail.contains("shrunk from") && detail.contains("to 1 operation(s)"),
        "{detail}"
    );
    assert!(
        detail.contains("replay: kaged-conformance fuzz"),
        "{detail}"
    );
    let replay = std::fs::read_to_string(out.path().join("replay.txt")).expect("replay.txt");
    assert!(
        replay.contains("--seed 3") && replay.contains("kaged-host-sim session"),
        "{replay}"
    );

    // The script replays it with the host alone.
    let text = std::fs::read_to_string(out.path().join("replay.yaml")).expect("replay.yaml");
    let script = Script::from_yaml_str(&text).expect("a session script");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let audit = AuditLog::memory();
    let host = HostSim::new(HostConfig {
        audit: audit.clone(),
        ..HostConfig::default()
    });
    let outcomes = rt.block_on(async {
        let session = host.launch(&dir).await.expect("launch");
        let outcomes = run_steps(&host, &session, &script, &mut |_, _| {}).await;
        session.shutdown().await;
        outcomes
    });
    assert!(
        outcomes.iter().any(|o| !o.ok),
        "the script reproduces the failure: {outcomes:?}"
    );
    assert!(
        audit.names().contains(&"plugin.crashed"),
        "{:?}",
        audit.names()
    );
}

#[test]
fn a_hang_on_long_strings_is_found() {
    let dir = own_fixture("fuzz-long-string");
    let (code, report, _out) = fuzz(
        &dir,
        &["--duration", "60s", "--soak", "0", "--shrink-budget", "5s"],
    );
    assert_eq!(code, Some(1));
    let c = case(&report, "fuzz.answers_in_time");
    assert_eq!(c["status"], "fail", "{c}");
    assert!(
        c["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("fuzz-long-string.shout"),
        "{c}"
    );
}

#[test]
fn memory_growing_per_call_is_reported_with_its_slope() {
    let dir = own_fixture("fuzz-leaky");
    let (code, report, out) = fuzz(&dir, &["--duration", "2s", "--soak", "200"]);
    // SHOULD: a warning, not a failed run.
    assert_eq!(code, Some(0));
    let c = case(&report, "fuzz.memory_bounded");
    assert_eq!(c["status"], "warn", "{c}");
    let detail = c["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("KiB per 1000 calls"), "{c}");
    // Its reproducer without the fuzzer: `kaged-host-sim bench` repeats the
    // call and prints the plugin's RSS.
    let bench = std::fs::read_to_string(out.path().join("memory.txt")).expect("memory.txt");
    assert!(
        bench.starts_with("kaged-host-sim bench ") && bench.contains("--method fuzz-leaky.note"),
        "{bench}"
    );
    assert!(detail.contains(bench.trim()), "{detail}");
}

/// A plugin that keeps every rule runs clean, bounded by `--calls` (the
/// examples run clean too: `examples/echo/tests/fuzz.rs`).
#[test]
fn a_conforming_plugin_fuzzes_clean() {
    let dir = own_fixture("conforming");
    let (code, report, _out) = fuzz(
        &dir,
        &["--duration", "60s", "--calls", "400", "--soak", "300"],
    );
    assert_eq!(code, Some(0), "{report}");
    let statuses: Vec<&str> = report["cases"]
        .as_array()
        .map(|c| c.iter().filter_map(|c| c["status"].as_str()).collect())
        .unwrap_or_default();
    assert!(statuses.iter().all(|s| *s == "pass"), "{report}");
}

#[test]
fn a_hook_answering_an_error_is_found() {
    let dir = own_fixture("hook-errors");
    let (code, report, _out) = fuzz(&dir, &["--duration", "20s", "--soak", "0"]);
    assert_eq!(code, Some(1));
    let c = case(&report, "fuzz.hook_answers");
    assert_eq!(c["status"], "fail", "{c}");
    assert!(
        c["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("kaged.hook."),
        "{c}"
    );
}

#[test]
fn a_compactor_dropping_an_always_keep_message_past_20_is_found_at_21() {
    let dir = own_fixture("fuzz-compactor-drops");
    let (code, report, _out) = fuzz(&dir, &["--duration", "60s", "--soak", "0"]);
    assert_eq!(code, Some(1));
    let c = case(&report, "fuzz.compactor_contract");
    assert_eq!(c["status"], "fail", "{c}");
    let detail = c["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("always-keep message"), "{detail}");
    assert!(detail.contains("to 1 operation(s)"), "{detail}");
}
