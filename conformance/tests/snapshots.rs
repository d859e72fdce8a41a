//! Snapshots: the JSON report of one real run (durations and directories
//! redacted) and the JUnit / TAP / Markdown renderings of a small report.

mod support;

use kaged_conformance::catalogue::Kind;
use kaged_conformance::catalogue::Level;
use kaged_conformance::report::{
    render_junit, render_markdown, render_tap, CaseResult, EndedBy, PluginInfo, Report, Status,
};
use serde_json::Value;
use support::{options, own_fixture};

fn redact(v: &mut Value, what: &str, with: &str) {
    match v {
        Value::String(s) if s.contains(what) => *s = s.replace(what, with),
        Value::Array(a) => a.iter_mut().for_each(|x| redact(x, what, with)),
        Value::Object(o) => o.values_mut().for_each(|x| redact(x, what, with)),
        _ => {}
    }
}

/// Measured times in details ("ping answered in 3 ms") become `[n] ms`:
/// they depend on how busy the machine is.
fn redact_times(v: &mut Value) {
    let ms = regex::Regex::new(r"\b\d+ ms\b").expect("regex");
    match v {
        Value::String(s) => *s = ms.replace_all(s, "[n] ms").into_owned(),
        Value::Array(a) => a.iter_mut().for_each(redact_times),
        Value::Object(o) => o.values_mut().for_each(redact_times),
        _ => {}
    }
}

fn redact_dir(v: &mut Value, dir: &str) {
    redact(v, dir, "[dir]");
}

/// Caged (`--cage require`), so that the report is the same on every
/// machine with bwrap; without it, a failure under `CI=true`, else a skip.
#[test]
fn json_report_of_the_conforming_fixture() {
    if !kaged_host_core::testing::cage_available_for_blocking(
        "json_report_of_the_conforming_fixture",
    ) {
        return;
    }
    let dir = own_fixture("conforming");
    let opts = kaged_conformance::Options {
        cage: kaged_host_core::CageMode::Require,
        ..options()
    };
    let report = kaged_conformance::run_suite(&dir, &opts).expect("the suite runs");
    let mut v: Value = serde_json::from_str(&report.to_json()).expect("json");
    let canonical = std::fs::canonicalize(&dir).expect("dir");
    redact_dir(&mut v, &canonical.display().to_string());
    redact_dir(&mut v, &dir.display().to_string());
    redact_times(&mut v);
    for state in [
        "cgroup available, not applied",
        "cgroup unavailable",
        "cgroup partly applied",
        "cgroup applied",
    ] {
        redact(&mut v, state, "cgroup [state]");
    }
    for state in [
        "landlock fs; scoped",
        "landlock fs",
        "landlock scoped",
        "landlock unavailable",
    ] {
        redact(&mut v, state, "landlock [state]");
    }
    // Who the plugin runs as depends on the host's uid (and the plugin id
    // range): `uid N` on a root host, `host uid N` on another.
    if let Some(user) = v["cage_policy"]["user"].as_str().map(str::to_string) {
        redact(&mut v, &user, "[user]");
    }
    // The cage's cgroup and Landlock states (and the cage itself, on a
    // machine without bwrap) depend on the machine; what the policy binds
    // does not.
    insta::assert_json_snapshot!("conforming_report", v, {
        ".cases[].duration_ms" => "[duration_ms]",
        ".cage_policy.cgroup" => "[cgroup state]",
        ".cage_policy.landlock" => "[landlock state]",
        ".cage_policy.user" => "[user]",
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
        kind: match status {
            Status::Pass => None,
            Status::Fail => Some(Kind::IdentityMismatch),
            Status::Skip => Some(Kind::NotApplicable),
            Status::Warn => Some(Kind::Flood),
        },
        // The warning follows from the failure (a made-up link, to show it).
        caused_by: (status == Status::Warn).then(|| "handshake.name_matches".to_string()),
        ended_by: Some(if status == Status::Skip {
            EndedBy::NoWait
        } else {
            EndedBy::Answer
        }),
        known_failure: None,
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

/// [`small_report`] with the failing case's last wire lines (the
/// Markdown report shows them).
fn small_report_with_wire() -> Report {
    let mut r = small_report();
    if let Some(c) = r.cases.iter_mut().find(|c| c.status == Status::Fail) {
        c.transcript_tail = vec![
            r#"{"seq":1,"dir":"host>plugin","msg":{"jsonrpc":"2.0","id":1,"method":"initialize"}}"#.into(),
            r#"{"seq":2,"dir":"plugin>host","msg":{"jsonrpc":"2.0","id":1,"result":{"name":"other"}}}"#.into(),
            r#"{"seq":3,"dir":"plugin!stderr","msg":"a | pipe and ``` backticks"}"#.into(),
        ];
    }
    r
}

#[test]
fn markdown_rendering() {
    insta::assert_snapshot!(
        "small_report_markdown",
        render_markdown(&small_report_with_wire())
    );
}

#[test]
fn junit_rendering() {
    insta::assert_snapshot!("small_report_junit", render_junit(&small_report()));
}

#[test]
fn tap_rendering() {
    insta::assert_snapshot!("small_report_tap", render_tap(&small_report()));
}
