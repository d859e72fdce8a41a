//! The binary: exit statuses of ADDENDUM §11, formats, baselines,
//! transcripts, argument errors.
//!
//! Runs use `--time-scale 1` (the spec's budgets) unless a timeout must
//! elapse: a scaled `initialize` or `shutdown` would hang a verdict on how
//! fast a busy machine starts or ends the fixture's interpreter, and with
//! nothing to wait out the spec's budgets cost nothing.

mod support;

use serde_json::Value;
use support::{cmd, host_fixture, own_fixture, stdout_json};

#[test]
fn a_conforming_plugin_exits_0_with_the_addendum_json() {
    let out = cmd()
        .args(["run", "--format", "json", "--time-scale", "1"])
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = stdout_json(&out);
    assert_eq!(v["schema"], "kaged-conformance-report/v1");
    assert_eq!(v["plugin"]["name"], "conforming");
    assert_eq!(v["time_scale"], 1.0);
    let top: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    // ADDENDUM §11's members in order, plus the timeouts (§10) and the
    // cage (§13: a reason only when uncaged).
    let cage: &[&str] = match v["cage"].as_str() {
        Some("bwrap") => &["cage", "cage_policy"],
        Some("unavailable") => &["cage", "cage_reason", "cage_policy"],
        other => panic!("cage under --cage auto: {other:?}"),
    };
    let mut want = vec!["schema", "plugin", "time_scale", "timeouts"];
    want.extend(cage);
    want.extend(["summary", "cases"]);
    assert_eq!(top, want);
    assert_eq!(v["cage_policy"]["network"], "none");
    assert_eq!(v["cage_policy"]["seccomp"], "default");
    assert_eq!(v["timeouts"]["request_ms"], 30_000);
    assert_eq!(v["summary"]["failed"], 0);
    let c = &v["cases"][0];
    let keys: Vec<&str> = c
        .as_object()
        .expect("case")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "title",
            "level",
            "spec",
            "status",
            "duration_ms",
            "detail",
            "audit_events",
            // Extensions of the §11 object: a passing case has no kind
            // and no cause, and says what ended it.
            "ended_by"
        ]
    );
}

#[test]
fn the_time_scale_sets_the_effective_timeouts() {
    // Only the manifest cases: no verdict waits on the plugin.
    let out = cmd()
        .args([
            "run",
            "--format",
            "json",
            "--time-scale",
            "0.05",
            "--only",
            "manifest.*",
        ])
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let v = stdout_json(&out);
    assert_eq!(v["time_scale"], 0.05);
    assert_eq!(v["timeouts"]["request_ms"], 1500);
    assert_eq!(v["timeouts"]["initialize_ms"], 500);
    // Every manifest.* case of the catalogue, passed.
    let manifest_cases = kaged_conformance::catalogue::CATALOGUE
        .iter()
        .filter(|c| c.id.starts_with("manifest."))
        .count();
    assert_eq!(v["summary"]["passed"], manifest_cases);
}

#[test]
fn a_must_failure_exits_1_and_tap_says_not_ok() {
    let out = cmd()
        .args(["run", "--format", "tap", "--time-scale", "1"])
        .arg(host_fixture("exits-at-once"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("TAP version 13\n"), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains(" - launch.starts "))
        .unwrap_or_else(|| panic!("a launch.starts point: {text}"));
    assert!(line.starts_with("not ok "), "{line}");
}

#[test]
fn strict_turns_should_failures_into_exit_1() {
    let dir = own_fixture("undeclared-notifier");
    let lax = cmd()
        .args(["run", "--time-scale", "1"])
        .arg(&dir)
        .output()
        .expect("runs");
    assert_eq!(lax.status.code(), Some(0));
    let human = String::from_utf8_lossy(&lax.stdout);
    assert!(
        human.contains("WARN notifications.declared_only"),
        "{human}"
    );
    assert!(
        human.contains("rule:     \"notifications: Notification types the plugin may emit.\""),
        "{human}"
    );
    assert!(
        !human.contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
    let strict = cmd()
        .args(["run", "--strict", "--time-scale", "1"])
        .arg(&dir)
        .output()
        .expect("runs");
    assert_eq!(strict.status.code(), Some(1));
}

#[test]
fn known_failures_and_stale_entries_warn() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let baseline = tmp.path().join("known.txt");
    std::fs::write(
        &baseline,
        "# ours\nprotocol.unknown_method\nprotocol.ping  # stale\n",
    )
    .expect("write");
    let out = cmd()
        .args([
            "run",
            "--format",
            "json",
            "--time-scale",
            "1",
            "--only",
            "protocol.*",
            "--known-failing",
        ])
        .arg(&baseline)
        // Its failure is an answer, not a timeout (at scale 1, waiting out
        // `ignores-batch`'s would take the spec's 30 s).
        .arg(own_fixture("unknown-method-ok"))
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "a known failure and a stale entry only warn"
    );
    let v = stdout_json(&out);
    let find = |id: &str| {
        v["cases"]
            .as_array()
            .and_then(|a| a.iter().find(|c| c["id"] == id))
            .cloned()
            .expect(id)
    };
    let known = find("protocol.unknown_method");
    assert_eq!(known["status"], "warn");
    assert!(known["detail"]
        .as_str()
        .unwrap_or_default()
        .starts_with("known failure"));
    let ping = find("protocol.ping");
    assert_eq!(ping["status"], "warn");
    assert!(
        ping["detail"]
            .as_str()
            .unwrap_or_default()
            .starts_with("stale baseline entry"),
        "{ping}"
    );
    assert!(
        ping["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("remove it from"),
        "{ping}"
    );
    let skipped = find("manifest.valid");
    assert_eq!(skipped["status"], "skip");
    assert_eq!(skipped["detail"], "not selected by --only");
}

#[test]
fn transcripts_are_written_per_case_passing_too() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("wire");
    let report = tmp.path().join("report.xml");
    let out = cmd()
        .args([
            "run",
            "--format",
            "junit",
            "--time-scale",
            "1",
            "--transcript-dir",
        ])
        .arg(&dir)
        .arg("--output")
        .arg(&report)
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let xml = std::fs::read_to_string(&report).expect("report written");
    assert!(
        xml.contains("<testsuite name=\"kaged-conformance: conforming\""),
        "{xml}"
    );
    let ping = std::fs::read_to_string(dir.join("protocol.ping.jsonl")).expect("ping transcript");
    let lines: Vec<Value> = ping
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l["dir"] == "host>plugin" && l["msg"]["method"] == "ping"),
        "{ping}"
    );
    assert_eq!(lines[0]["seq"], 1);
    let tool = std::fs::read_to_string(dir.join("methods.tool_valid_args[conforming.shout].jsonl"))
        .expect("tool transcript");
    assert!(tool.contains("CONFORMANCE!"), "{tool}");
}

#[test]
fn could_not_run_exits_2_with_one_line() {
    let cases: &[&[&str]] = &[
        &["run", "/no/such/plugin-dir"],
        &["run", "--time-scale", "0", "."],
        &["run", "--time-scale", "1.5", "."],
        &["run", "--time-scale", "fast", "."],
        &["run", "--format", "yaml", "."],
        &["run"],
        &["frobnicate"],
    ];
    for args in cases {
        let out = cmd().args(*args).output().expect("runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("kaged-conformance: "), "{err}");
    }
    let out = cmd()
        .args(["run", "/no/such/plugin-dir"])
        .output()
        .expect("runs");
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("no such plugin directory: /no/such/plugin-dir"));
    let out = cmd()
        .args(["run", "--time-scale", "0", "."])
        .output()
        .expect("runs");
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 < F <= 1"));
}

#[test]
fn list_prints_the_catalogue() {
    let out = cmd()
        .args(["list", "--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        v.as_array().map(Vec::len),
        Some(kaged_conformance::catalogue::CATALOGUE.len())
    );
    let md = cmd()
        .args(["list", "--format", "markdown"])
        .output()
        .expect("runs");
    assert_eq!(
        String::from_utf8_lossy(&md.stdout),
        kaged_conformance::list::render_markdown()
    );
}

#[test]
fn unusable_baseline_or_storage_db_exits_2() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing = tmp.path().join("no-such-baseline.txt");
    let out = cmd()
        .args(["run", "--known-failing"])
        .arg(&missing)
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read the known-failing baseline"));
    let db = tmp.path().join("no/such/dir/storage.sqlite3");
    let out = cmd()
        .args(["run", "--storage-db"])
        .arg(&db)
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("kaged-conformance: error: cannot open the storage database"),
        "{err}"
    );
}

#[test]
fn cage_require_without_bwrap_exits_2() {
    let out = cmd()
        .env("KAGED_BWRAP", "/nonexistent/bwrap")
        .args(["run", "--cage", "require", "--time-scale", "0.05"])
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--cage require: plugins cannot be caged here")
            && err.contains("/nonexistent/bwrap"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn cage_auto_without_bwrap_warns_and_reports_unavailable() {
    let out = cmd()
        .env("KAGED_BWRAP", "/nonexistent/bwrap")
        .args(["run", "--format", "json", "--time-scale", "0.05"])
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: cage: unavailable, the plugin ran UNCAGED"),
        "{err}"
    );
    let v = stdout_json(&out);
    assert_eq!(v["cage"], "unavailable");
    assert!(v["cage_reason"]
        .as_str()
        .is_some_and(|r| r.contains("/nonexistent/bwrap")));
    assert_eq!(
        v["cage_policy"]["network"], "none",
        "the policy it would get"
    );
    let case = v["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .find(|c| c["id"] == "cage.starts_caged")
        .expect("cage.starts_caged");
    assert_eq!(case["status"], "skip");
}

#[test]
fn cage_off_is_said_in_every_format() {
    for (format, needle) in [
        ("json", "\"cage\": \"off\""),
        ("tap", "# cage: off, the plugin ran UNCAGED (--cage off)"),
        ("junit", "name=\"cage\" value=\"off\""),
        ("human", "cage: off, the plugin ran UNCAGED (--cage off)"),
    ] {
        let out = cmd()
            .args([
                "run",
                "--cage",
                "off",
                "--time-scale",
                "0.05",
                "--format",
                format,
            ])
            .arg(own_fixture("conforming"))
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(0), "{format}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(needle), "{format}: {text}");
    }
}

#[test]
fn write_baseline_lists_what_fails_and_a_run_against_it_passes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let baseline = tmp.path().join("baseline.txt");
    let run = |extra: &[&std::ffi::OsStr]| {
        cmd()
            .args([
                "run",
                "--format",
                "json",
                "--time-scale",
                "1",
                "--only",
                "protocol.*",
            ])
            .args(extra)
            .arg(own_fixture("unknown-method-ok"))
            .output()
            .expect("runs")
    };
    let first = run(&["--write-baseline".as_ref(), baseline.as_os_str()]);
    assert_eq!(
        first.status.code(),
        Some(1),
        "protocol.unknown_method fails"
    );
    let text = std::fs::read_to_string(&baseline).expect("the baseline was written");
    assert!(
        text.starts_with("# Known-failing cases of unknown-method-ok 1.0.0"),
        "{text}"
    );
    let ids: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(ids, ["protocol.unknown_method"], "{text}");

    let second = run(&["--known-failing".as_ref(), baseline.as_os_str()]);
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&second.stdout)
    );
}

#[test]
fn max_failures_stops_after_n_failed_cases_and_skips_the_rest() {
    let dir = own_fixture("wrong-but-prompt");
    let run = |extra: &[&str]| {
        let out = cmd()
            .args(["run", "--format", "json", "--time-scale", "1"])
            .args(extra)
            .arg(&dir)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(1), "a MUST case fails");
        stdout_json(&out)
    };
    let statuses = |report: &Value| -> Vec<(String, String, String)> {
        report["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .map(|c| {
                let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
                (s("id"), s("status"), s("detail"))
            })
            .collect()
    };
    let full = statuses(&run(&[]));
    let failed = full.iter().filter(|c| c.1 == "fail").count();
    assert!(failed >= 2, "the fixture fails several cases: {full:?}");

    let cut = run(&["--max-failures", "1"]);
    let cases = statuses(&cut);
    // The same cases, in the same order, and none left out.
    let ids = |v: &[(String, String, String)]| v.iter().map(|c| c.0.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&cases), ids(&full));
    let first_fail = cases
        .iter()
        .position(|c| c.1 == "fail")
        .expect("one case fails");
    assert_eq!(
        cases.iter().filter(|c| c.1 == "fail").count(),
        1,
        "{cases:?}"
    );
    // Up to the first failure, the verdicts are the full run's.
    let verdicts = |v: &[(String, String, String)]| {
        v.iter()
            .map(|c| (c.0.clone(), c.1.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        verdicts(&cases[..=first_fail]),
        verdicts(&full[..=first_fail])
    );
    // Every case after it is a skip that says why (statuses stay pass,
    // fail, skip, warn) but the shutdown barrier, which runs first and so
    // keeps the full run's verdict.
    let barrier = "lifecycle.shutdown_exits_zero";
    for (id, status, detail) in &cases[first_fail + 1..] {
        if id == barrier {
            let full_status = full.iter().find(|c| c.0 == *id).map(|c| c.1.clone());
            assert_eq!(Some(status.clone()), full_status, "{id}: {detail}");
            continue;
        }
        assert_eq!(status, "skip", "{id}: {detail}");
        assert_eq!(detail, "not run: --max-failures 1 reached", "{id}");
    }
    let kinds: Vec<&str> = cut["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .skip(first_fail + 1)
        .filter(|c| c["id"] != barrier)
        .map(|c| c["kind"].as_str().unwrap_or_default())
        .collect();
    assert!(kinds.iter().all(|k| *k == "max_failures"), "{kinds:?}");
}

#[test]
fn max_failures_zero_is_refused_with_exit_2() {
    let out = cmd()
        .args(["run", "--max-failures", "0"])
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--max-failures"), "{err}");
}

/// `kaged-conformance run … | head`: a reader that stops reading ends the
/// output, not the run (no panic on the broken pipe), in the streamed
/// human report and in a format printed at the end.
#[test]
fn a_closed_stdout_ends_the_output_not_the_run() {
    for format in ["human", "json"] {
        let out = kaged_test_support::command::assert_quiet_on_closed_stdout(
            std::process::Command::new(env!("CARGO_BIN_EXE_kaged-conformance"))
                .args(["run", "--format", format, "--time-scale", "1"])
                .arg(own_fixture("conforming")),
        );
        assert_eq!(out.status.code(), Some(0), "--format {format}");
    }
}

/// On a terminal the suite draws its progress on stderr (cases judged,
/// the time, the last verdict) and clears it at the end; stdout keeps the
/// report alone. With `--quiet`, or with stderr not a terminal, nothing.
#[test]
fn progress_is_drawn_on_a_terminal_only_and_not_with_quiet() {
    let run = |extra: &[&str]| {
        kaged_test_support::terminal::run_with_terminal_stderr(
            std::process::Command::new(env!("CARGO_BIN_EXE_kaged-conformance"))
                .args(["run", "--format", "json", "--time-scale", "1"])
                .arg(own_fixture("conforming"))
                .args(extra),
        )
    };
    let drawn = run(&[]);
    assert_eq!(drawn.status.code(), Some(0), "{}", drawn.terminal);
    let report: Value = serde_json::from_str(&drawn.stdout).expect("stdout is the report alone");
    assert_eq!(report["summary"]["failed"], 0, "{report}");
    assert!(
        drawn.drew_and_cleared("cases judged"),
        "{:?}",
        drawn.terminal
    );
    assert!(
        drawn.terminal.contains("kaged-conformance: cases judged "),
        "{:?}",
        drawn.terminal
    );
    let quiet = run(&["--quiet"]);
    assert_eq!(quiet.status.code(), Some(0), "{}", quiet.terminal);
    assert!(
        !quiet.terminal.contains("cases judged"),
        "{:?}",
        quiet.terminal
    );
    let piped = cmd()
        .args(["run", "--format", "json", "--time-scale", "1"])
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&piped.stderr);
    assert!(
        !err.contains("cases judged") && !err.contains('\x1b'),
        "{err}"
    );
}

/// The human report lists each case that ran, and counts, one line per
/// kind, the cases it does not list: those that could not run because
/// another failed (the root is listed, and in detail below), and those
/// `--only`/`--skip` left out. Streamed and written alike; every other
/// format lists them all.
#[test]
fn the_human_report_counts_the_cases_it_does_not_list() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let plugin = tmp.path().join("broken");
    std::fs::create_dir(&plugin).expect("dir");
    std::fs::write(
        plugin.join("kaged-plugin.yaml"),
        "name: broken\nversion: 1.0.0\nkaged_api: 1\ncommand: [\n",
    )
    .expect("manifest");
    let written = tmp.path().join("report.txt");
    let out = cmd()
        .args(["run", "--time-scale", "1", "--output"])
        .arg(&written)
        .arg(&plugin)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let json = cmd()
        .args(["run", "--format", "json", "--time-scale", "1"])
        .arg(&plugin)
        .output()
        .expect("runs");
    let skipped = stdout_json(&json)["summary"]["skipped"]
        .as_u64()
        .expect("a count");
    assert!(skipped > 40, "{skipped}");
    let count = format!("({skipped} case(s) not run: they follow from manifest.valid)");
    let streamed = String::from_utf8_lossy(&out.stdout).to_string();
    let file = std::fs::read_to_string(&written).expect("the written report");
    for text in [&streamed, &file] {
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines.iter().any(|l| l.starts_with("FAIL manifest.valid")),
            "{text}"
        );
        assert_eq!(lines.iter().filter(|l| **l == count).count(), 1, "{text}");
        assert!(!lines.iter().any(|l| l.starts_with("SKIP")), "{text}");
    }

    // --only: the cases left out are one line too.
    let out = cmd()
        .args(["run", "--time-scale", "1", "--only", "manifest.*"])
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("PASS manifest.valid"), "{text}");
    assert!(!text.contains("protocol.ping"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with('(') && l.ends_with(" case(s) left out by --only/--skip)")),
        "{text}"
    );
}
