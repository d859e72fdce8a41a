//! `kaged-host-sim bench`: against a Python fixture plugin, human and
//! JSON output, the host's calibrated own cost, and its errors. Numbers
//! are printed, never asserted (only that they were measured).

use crate::support::host::fixture;
use assert_cmd::Command;
use serde_json::Value;

fn cli() -> Command {
    let mut c = Command::cargo_bin("kaged-host-sim").expect("binary");
    c.timeout(std::time::Duration::from_secs(120));
    c
}

#[test]
fn bench_reports_both_phases_as_json() {
    let out = cli()
        .arg("bench")
        .arg(fixture("good"))
        .args([
            "--method",
            "status.get",
            "--calls",
            "50",
            "--concurrency",
            "4",
            "--json",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("cage: "),
        "says how the plugin ran: {stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["plugin"], "good");
    assert_eq!(v["method"], "status.get");
    assert!(v["caged"].is_boolean());
    for (phase, k) in [("one_at_a_time", 1), ("pipelined", 4)] {
        let p = &v[phase];
        assert_eq!(p["calls"], 50, "{p}");
        assert_eq!(p["concurrency"], k, "{p}");
        assert_eq!(p["errors"], 0, "{p}");
        assert!(p["calls_per_sec"].as_f64().is_some_and(|c| c > 0.0), "{p}");
        // Latencies were measured (a call takes time), and the rate is
        // the calls answered over the phase's wall time.
        assert!(p["p50_us"].as_u64().is_some_and(|x| x > 0), "{p}");
        let (rate, seconds) = (p["calls_per_sec"].as_f64(), p["seconds"].as_f64());
        assert!(
            rate.zip(seconds)
                .is_some_and(|(r, s)| (r * s - 50.0).abs() < 0.5),
            "{p}"
        );
        assert!(p["plugin_cpu_us_per_call"].is_number(), "{p}");
    }
    assert!(v["plugin_rss_kib"].as_u64().is_some_and(|r| r > 0), "{v}");
    // The host's own cost, calibrated against the reference plugin under
    // the same host and cage: reported beside the plugin's, not subtracted.
    let host = &v["host"];
    for k in [
        "reference_calls_per_sec",
        "reference_pipelined_calls_per_sec",
        "host_us_per_call",
    ] {
        assert!(host[k].as_f64().is_some_and(|x| x > 0.0), "{k}: {host}");
    }
    // The plugin's share is its time per call less the host's (and the
    // storage broker's: none for status.get), unclamped.
    assert_eq!(host["broker_us_per_call"], 0.0, "{host}");
    assert_eq!(v["one_at_a_time"]["host_requests_per_call"], 0.0, "{v}");
    let plugin_per_call = 1e6
        / v["one_at_a_time"]["calls_per_sec"]
            .as_f64()
            .unwrap_or(f64::NAN);
    let expected = plugin_per_call - host["host_us_per_call"].as_f64().unwrap_or(f64::NAN);
    assert!(
        host["plugin_us_per_call"]
            .as_f64()
            .is_some_and(|x| (x - expected).abs() < 0.01),
        "{host}"
    );
}

/// A method that queries storage once per call: the broker's time is the
/// host's, reported apart and taken out of the plugin's share.
#[test]
fn the_storage_brokers_time_is_not_counted_as_the_plugins() {
    let out = cli()
        .arg("bench")
        .arg(fixture("good"))
        .args([
            "--method",
            "storage.try",
            "--calls",
            "40",
            "--concurrency",
            "4",
            "--json",
        ])
        .output()
        .expect("runs");
    kaged_test_support::command::assert_success("kaged-host-sim bench --method storage.try", &out);
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    for phase in ["one_at_a_time", "pipelined"] {
        let p = &v[phase];
        assert_eq!(
            p["host_requests_per_call"], 1.0,
            "one storage query per call: {p}"
        );
        assert!(
            p["broker_us_per_call"].as_f64().is_some_and(|b| b > 0.0),
            "{p}"
        );
    }
    let host = &v["host"];
    let broker = v["one_at_a_time"]["broker_us_per_call"]
        .as_f64()
        .unwrap_or(f64::NAN);
    assert_eq!(host["broker_us_per_call"].as_f64(), Some(broker), "{host}");
    let per_call = 1e6
        / v["one_at_a_time"]["calls_per_sec"]
            .as_f64()
            .unwrap_or(f64::NAN);
    let expected = per_call - host["host_us_per_call"].as_f64().unwrap_or(f64::NAN) - broker;
    assert!(
        host["plugin_us_per_call"]
            .as_f64()
            .is_some_and(|x| (x - expected).abs() < 0.01),
        "{host}"
    );
    let human = cli()
        .arg("bench")
        .arg(fixture("good"))
        .args(["--method", "storage.try", "--calls", "20"])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("; the storage broker: ")
            && text.contains(
                "(1.0 storage requests per call, the host's SQLite); the plugin's share: "
            ),
        "{text}"
    );
}

#[test]
fn bench_prints_human_lines_by_default() {
    let out = cli()
        .arg("bench")
        .arg(fixture("good"))
        .args(["--calls", "20"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("bench good: ping × 20 per phase"),
        "{text}"
    );
    assert!(
        text.contains("one at a time: ") && text.contains("pipelined (16 in flight): "),
        "{text}"
    );
    assert!(
        text.contains("host's own cost: ") && text.contains("the plugin's share: "),
        "{text}"
    );
}

#[test]
fn bench_refuses_a_failing_method_and_bad_counts() {
    let out = cli()
        .arg("bench")
        .arg(fixture("good"))
        .args(["--method", "no.such"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("call no.such"), "{err}");
    let out = cli()
        .arg("bench")
        .arg(fixture("good"))
        .args(["--calls", "0"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}

/// On a terminal the bench draws its progress on stderr (the calls made
/// of both plugins', the phase) and clears it; with `--quiet`, nothing.
#[test]
fn progress_is_drawn_on_a_terminal_only_and_not_with_quiet() {
    let run = |extra: &[&str]| {
        kaged_test_support::terminal::run_with_terminal_stderr(
            std::process::Command::new(env!("CARGO_BIN_EXE_kaged-host-sim"))
                .arg("bench")
                .arg(fixture("good"))
                .args(["--calls", "20", "--json"])
                .args(extra),
        )
    };
    let drawn = run(&[]);
    assert_eq!(drawn.status.code(), Some(0), "{}", drawn.terminal);
    let v: Value = serde_json::from_str(&drawn.stdout).expect("stdout is the report alone");
    assert_eq!(v["plugin"], "good");
    assert!(
        drawn.terminal.contains("kaged-host-sim bench [") && drawn.drew_and_cleared("calls ·"),
        "drawn, then cleared: {:?}",
        drawn.terminal
    );
    let quiet = run(&["--quiet"]);
    assert_eq!(quiet.status.code(), Some(0), "{}", quiet.terminal);
    assert!(!quiet.terminal.contains("calls ·"), "{:?}", quiet.terminal);
    assert!(quiet.terminal.contains("cage: "), "{:?}", quiet.terminal);
}
