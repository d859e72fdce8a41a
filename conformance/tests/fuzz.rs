//! `kaged-conformance fuzz` (issue 20, issue 30): planted bugs a single
//! probe misses are found and shrunk (across and inside operations), the
//! shrunk sequence replays as a YAML `kaged-host-sim session` script
//! without the fuzzer, and a conforming plugin runs clean. Every run is
//! bounded by `--cases` or `--calls` and shrinking by its runs, never by
//! the clock: what a test finds is the same on a busy machine.

mod support;

use kaged_host_core::{AuditLog, HostConfig, HostSim};
use kaged_host_engine::scenario::{run_steps, Script, SessionStep};
use serde_json::Value;
use support::{cmd, own_fixture};

/// `fuzz` with a seed, as JSON; the exit status and the report. The
/// shrink's wall-clock budget is out of reach: its runs bound it.
fn fuzz(dir: &std::path::Path, extra: &[&str]) -> (Option<i32>, Value, tempfile::TempDir) {
    let out = tempfile::tempdir().expect("tempdir");
    let o = cmd()
        .args([
            "fuzz",
            "--seed",
            "3",
            "--time-scale",
            "0.1",
            "--shrink-budget",
            "10h",
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

/// The `replay.yaml` written to `out`: YAML (not JSON), read by the
/// host-sim's script runner; its text and the script.
fn replay_script(out: &tempfile::TempDir) -> (String, Script) {
    let text = std::fs::read_to_string(out.path().join("replay.yaml")).expect("replay.yaml");
    assert!(
        text.starts_with("# kaged-conformance fuzz: ") && text.contains("\nsteps:\n- call: "),
        "commented block YAML: {text}"
    );
    let script = Script::from_yaml_str(&text).expect("a plugin script");
    (text, script)
}

/// Run `script` on the plugin in `dir` with the host alone; whether a step
/// failed, and the audit event names.
fn replay_with_the_host(dir: &std::path::Path, script: &Script) -> (bool, Vec<&'static str>) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let audit = AuditLog::memory();
    let host = HostSim::new(HostConfig::default().with_audit(audit.clone()));
    let outcomes = rt.block_on(async {
        let plugin = host.launch(dir).await.expect("launch");
        let outcomes = run_steps(&host, &plugin, script, &mut |_, _| {}).await;
        plugin.shutdown().await;
        outcomes
    });
    (outcomes.iter().any(|o| !o.ok), audit.names())
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
    let (code, report, out) = fuzz(&dir, &["--cases", "100", "--soak", "0"]);
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
    assert!(detail.contains("(exit code 70;"), "{detail}");
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
    let (_, script) = replay_script(&out);
    let (failed, audit) = replay_with_the_host(&dir, &script);
    assert!(failed, "the script reproduces the failure: {script:?}");
    assert!(audit.contains(&"plugin.crashed"), "{audit:?}");
}

/// Shrinking goes inside the operation: the batch the crash came in is
/// cut to the one call, its array to the fewest items that still crash,
/// every string to the shortest.
#[test]
fn a_crash_on_three_tags_shrinks_to_one_call_with_exactly_three_tags() {
    let dir = own_fixture("fuzz-three-tags");
    let (code, report, out) = fuzz(&dir, &["--cases", "100", "--soak", "0"]);
    assert_eq!(code, Some(1));
    let c = case(&report, "fuzz.no_crash");
    assert_eq!(c["status"], "fail", "{c}");
    let detail = c["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains(r#"fuzz-three-tags.tag {"note":"","tags":["","",""]} (valid"#)
            && detail.contains("to 1 operation(s)"),
        "{detail}"
    );
    // How it ended: the exit code and the plugin's last words.
    assert!(
        detail.contains("exit code 70; last stderr line: \"fuzz-three-tags: tag slot 3 of 2"),
        "{detail}"
    );

    let (text, script) = replay_script(&out);
    assert_eq!(script.steps.len(), 1, "{text}");
    let SessionStep::Call(step) = &script.steps[0] else {
        panic!("one call, not a batch: {text}");
    };
    assert_eq!(step.call, "fuzz-three-tags.tag", "{text}");
    let params = step.params.clone().unwrap_or_default();
    assert_eq!(
        params,
        serde_json::json!({"note": "", "tags": ["", "", ""]}),
        "{text}"
    );
    assert!(text.lines().count() < 20, "short and readable: {text}");
    let (failed, audit) = replay_with_the_host(&dir, &script);
    assert!(failed && audit.contains(&"plugin.crashed"), "{audit:?}");
}

#[test]
fn a_hang_on_long_strings_is_found() {
    // Each shrinking run of a hang costs a request timeout: three runs.
    let dir = own_fixture("fuzz-long-string");
    let (code, report, _out) = fuzz(
        &dir,
        &["--cases", "100", "--soak", "0", "--shrink-runs", "3"],
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
    let (code, report, out) = fuzz(&dir, &["--cases", "5", "--soak", "200"]);
    // SHOULD: a warning, not a failed run.
    assert_eq!(code, Some(0));
    let c = case(&report, "fuzz.memory_bounded");
    assert_eq!(c["status"], "warn", "{c}");
    let detail = c["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("KiB per 1000 calls") && detail.contains("over 200 call(s)"),
        "{c}"
    );
    // Its reproducer without the fuzzer: `kaged-host-sim bench` repeats the
    // call and prints the plugin's RSS.
    let bench = std::fs::read_to_string(out.path().join("memory.txt")).expect("memory.txt");
    assert!(
        bench.starts_with("kaged-host-sim bench ") && bench.contains("--method fuzz-leaky.note"),
        "{bench}"
    );
    assert!(detail.contains(bench.trim()), "{detail}");
}

/// No sequence reaches the 100th call of a process; the soak does, and
/// its stop is a crash with the exit code and the last stderr line, the
/// slope judged over the calls made.
#[test]
fn a_soak_that_stops_part_way_fails_no_crash_with_how_the_plugin_ended() {
    let dir = own_fixture("fuzz-soak-crash");
    let (code, report, _out) = fuzz(&dir, &["--cases", "10", "--soak", "200"]);
    assert_eq!(code, Some(1), "{report}");
    let c = case(&report, "fuzz.no_crash");
    assert_eq!(c["status"], "fail", "{c}");
    let detail = c["detail"].as_str().unwrap_or_default();
    for want in [
        "the memory soak stopped at call 100 of 200 (99 answered)",
        "exit code 71",
        "last stderr line: \"fuzz-soak-crash: call 100: the counter table is full\"",
    ] {
        assert!(detail.contains(want), "{want}: {detail}");
    }
    let m = case(&report, "fuzz.memory_bounded");
    let detail = m["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("over 99 call(s)") && detail.contains("stopped at call 100 of 200"),
        "{m}"
    );
}

/// A plugin that keeps every rule runs clean, bounded by `--calls` (the
/// examples run clean too: `examples/echo/tests/fuzz.rs`); it declares
/// tools, a config schema, hooks and the compactor role, so every
/// property is exercised and passes.
#[test]
fn a_conforming_plugin_fuzzes_clean() {
    let dir = own_fixture("conforming");
    let (code, report, _out) = fuzz(&dir, &["--calls", "400", "--soak", "300"]);
    assert_eq!(code, Some(0), "{report}");
    let cases = report["cases"].as_array().cloned().unwrap_or_default();
    assert_eq!(cases.len(), 10, "{report}");
    for c in &cases {
        assert_eq!(c["status"], "pass", "{c}");
        let detail = c["detail"].as_str().unwrap_or_default();
        assert!(
            detail.starts_with("held over ") || c["id"] == "fuzz.memory_bounded",
            "{c}"
        );
    }
}

#[test]
fn a_hook_answering_an_error_is_found() {
    let dir = own_fixture("hook-errors");
    let (code, report, _out) = fuzz(&dir, &["--cases", "100", "--soak", "0"]);
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
    let (code, report, out) = fuzz(&dir, &["--cases", "100", "--soak", "0"]);
    assert_eq!(code, Some(1));
    let c = case(&report, "fuzz.compactor_contract");
    assert_eq!(c["status"], "fail", "{c}");
    let detail = c["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("always-keep message"), "{detail}");
    assert!(detail.contains("to 1 operation(s)"), "{detail}");
    // Shrunk to 21 messages: one fewer and the bug is not there.
    let (text, script) = replay_script(&out);
    assert_eq!(script.steps.len(), 1, "{text}");
    let SessionStep::Call(step) = &script.steps[0] else {
        panic!("one call: {text}");
    };
    assert_eq!(step.call, "kaged.hook.pre_compact", "{text}");
    let params = step.params.clone().unwrap_or_default();
    let count = |k: &str| params[k].as_array().map_or(0, Vec::len);
    assert_eq!(
        count("messages_being_compacted") + count("messages_remaining"),
        21,
        "{text}"
    );
    assert!(
        detail.contains(&format!(
            "{} being compacted, {} remaining",
            count("messages_being_compacted"),
            count("messages_remaining")
        )),
        "{detail}"
    );
}

/// On a terminal the fuzzer draws its progress on stderr (a bar of the
/// sequences when --cases bounds the run, then the memory soak) and clears
/// it; with `--quiet`, nothing.
#[test]
fn progress_is_drawn_on_a_terminal_only_and_not_with_quiet() {
    let run = |extra: &[&str]| {
        kaged_test_support::terminal::run_with_terminal_stderr(
            std::process::Command::new(env!("CARGO_BIN_EXE_kaged-conformance"))
                .args(["fuzz", "--seed", "3", "--cases", "3", "--soak", "20"])
                .args(["--time-scale", "0.1", "--format", "json"])
                .args(extra)
                .arg(own_fixture("conforming")),
        )
    };
    let drawn = run(&[]);
    assert_eq!(drawn.status.code(), Some(0), "{}", drawn.terminal);
    let report: Value = serde_json::from_str(&drawn.stdout).expect("stdout is the report alone");
    assert!(report["cases"].is_array(), "{report}");
    assert!(
        drawn.terminal.contains("kaged-conformance fuzz [")
            && drawn.drew_and_cleared("/3 sequences"),
        "{:?}",
        drawn.terminal
    );
    let quiet = run(&["--quiet"]);
    assert_eq!(quiet.status.code(), Some(0), "{}", quiet.terminal);
    assert!(
        !quiet.terminal.contains("sequences ·"),
        "{:?}",
        quiet.terminal
    );
    // The run's own lines (what it fuzzes, what it did) stay.
    assert!(
        quiet.terminal.contains("kaged-conformance fuzz: "),
        "{:?}",
        quiet.terminal
    );
}

#[test]
fn an_internal_error_on_valid_arguments_fails_fuzz_as_it_fails_run() {
    // One rule (`kaged_conformance::valid_args`): -32603 on arguments the
    // schema allows is no domain error.
    let dir = own_fixture("tool-internal-error");
    let (code, report, _out) = fuzz(&dir, &["--cases", "20", "--soak", "0"]);
    assert_eq!(code, Some(1));
    let c = case(&report, "fuzz.valid_args_accepted");
    assert_eq!(c["status"], "fail", "{c}");
    let d = c["detail"].as_str().unwrap_or_default();
    assert!(
        d.contains("tool-internal-error.file")
            && d.contains("-32603")
            && d.contains("handler failed"),
        "{c}"
    );
}

#[test]
fn one_seed_shrinks_to_the_same_replay_on_a_busy_machine_as_on_an_idle_one() {
    // Shrinking is bounded by runs, not by the clock: the same seed gives
    // the same replay whatever else the machine does. The load is two
    // spinning threads, stopped (and joined) when the run ends.
    let dir = own_fixture("fuzz-empty-array");
    let args = ["--cases", "50", "--soak", "0", "--shrink-runs", "25"];
    let (_, _, idle) = fuzz(&dir, &args);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spinners: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                }
            })
        })
        .collect();
    let (_, _, busy) = fuzz(&dir, &args);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for s in spinners {
        s.join().expect("spinner");
    }
    let replay = |d: &tempfile::TempDir| {
        std::fs::read_to_string(d.path().join("replay.yaml")).expect("replay.yaml")
    };
    let (a, b) = (replay(&idle), replay(&busy));
    assert!(a.contains("fuzz.no_crash"), "{a}");
    assert_eq!(a, b, "the same seed, another replay");
}
