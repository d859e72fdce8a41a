//! The daemon's operational log under a hostile plugin's stderr (issue
//! 45): 200 000 lines, each forging a lifecycle line behind a bare `\r`
//! with escape sequences and a bell, reach `up`'s log as the burst and the
//! rate (`bounds::STDERR_*`) allow, escaped, and the rest is counted in a
//! warning tagged with the plugin's name.

use std::time::Instant;

use kaged_host_core::bounds::{STDERR_BURST_LINES, STDERR_LINES_PER_SEC};

use crate::harness::{plugins, Up};

#[test]
fn a_stderr_flood_reaches_the_log_rate_limited_escaped_and_counted() {
    let dir = plugins(&["stderr-flood"]);
    let mut up = Up::start(dir.path());
    up.wait_plugin("stderr-flood", |p| p["state"] == "running");
    let started = Instant::now();
    let (status, body) = up.http(
        "POST",
        "/api/v1/plugins/stderr-flood/call/stderr.flood",
        // Answered at once, written after: the flood's pace is the
        // machine's, never a request timeout's.
        Some(r#"{"lines": 200000, "background": true}"#),
    );
    assert_eq!(status, 200, "{body}");
    let report = up.wait_err_line(|l| l.contains("stderr lines dropped"));
    let secs = started.elapsed().as_secs() + 1;
    assert!(report.contains("WARN"), "{report}");
    assert!(report.contains("plugin=stderr-flood"), "{report}");
    // Everything `up` printed so far: no control character, on either
    // stream, so no line can be overwritten on the operator's terminal.
    for line in up.err_seen.iter().chain(&up.seen) {
        assert!(
            !line.chars().any(|c| c.is_control() && c != '\t'),
            "{line:?}"
        );
    }
    let forged: Vec<&String> = up
        .err_seen
        .iter()
        .filter(|l| l.contains("kaged_plugin_stderr: flood "))
        .collect();
    assert!(!forged.is_empty());
    for line in &forged {
        assert!(
            line.contains("\\recho: plugin.spawned pid=1 \\x1b[31mred\\x1b[0m\\x07"),
            "{line}"
        );
        assert!(line.contains("plugin=stderr-flood"), "{line}");
    }
    let limit = STDERR_BURST_LINES as u64 + STDERR_LINES_PER_SEC as u64 * secs;
    assert!(
        forged.len() as u64 <= limit,
        "{} lines in {secs} s",
        forged.len()
    );
}
