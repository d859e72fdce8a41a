//! Snapshots: the JSON report of one real run (durations and directories
//! redacted) and the JUnit / TAP renderings of a small report.

mod support;

use kaged_conformance::catalogue::Level;
use kaged_conformance::report::{render_junit, render_tap, CaseResult, PluginInfo, Report, Status};
use serde_json::Value;
use support::{own_fixture, run};

fn redact_dir(v: &mut Value, dir: &str) {
    match v {
        Value::String(s) if s.contains(dir) => *s = s.replace(dir, "[dir]"),
        Value::Array(a) => a.iter_mut().for_each(|x| redact_dir(x, dir)),
        Value::Object(o) => o.values_mut().for_each(|x| redact_dir(x, dir)),
        _ => {}
    }
}

#[test]
fn json_report_of_the_conforming_fixture() {
    let dir = own_fixture("conforming");
    let report = run(dir.clone());
    let mut v: Value = serde_json::from_str(&report.to_json()).expect("json");
    let canonical = std::fs::canonicalize(&dir).expect("dir");
    redact_dir(&mut v, &canonical.display().to_string());
    redact_dir(&mut v, &dir.display().to_string());
    insta::assert_json_snapshot!("conforming_report", v, {
        ".cases[].duration_ms" => "[duration_ms]",
    });
}

fn small_report() -> Report {
    let case = |id: &str, level: Level, status: Status, detail: &str, events: &[&str]| CaseResult {
        id: id.into(),
        title: format!("title of {id}"),
        level,
        spec: "plugin-host.md § Somewhere".into(),
        status,
        duration_ms: 12,
        detail: detail.into(),
        audit_events: events.iter().map(|e| e.to_string()).collect(),
        sentence: "A sentence.".into(),
        transcript_tail: Vec::new(),
    };
    Report::new(
        PluginInfo {
            name: "demo".into(),
            version: "1.2.3".into(),
            dir: "plugins/demo".into(),
        },
        0.5,
        vec![
            case(
                "protocol.ping",
                Level::Must,
                Status::Pass,
                "ping answered",
                &[],
            ),
            case(
                "handshake.name_matches",
                Level::Must,
                Status::Fail,
                "expected: name \"demo\"; actual: \"other\"",
                &["plugin.name_mismatch", "plugin.killed"],
            ),
            case(
                "hooks.answers",
                Level::Must,
                Status::Skip,
                "the manifest subscribes to no hook",
                &[],
            ),
            case(
                "notifications.no_flood",
                Level::Should,
                Status::Warn,
                "101 per window # dropped",
                &["plugin.notification_flood"],
            ),
        ],
    )
}

#[test]
fn junit_rendering() {
    insta::assert_snapshot!("small_report_junit", render_junit(&small_report()));
}

#[test]
fn tap_rendering() {
    insta::assert_snapshot!("small_report_tap", render_tap(&small_report()));
}
