//! A hostile plugin's stderr (issue 45): a flood of lines, each forging a
//! lifecycle line behind a bare `\r` with escape sequences and a bell.
//! What reaches the log and the transcript is rate limited per plugin
//! (`bounds::STDERR_*`), the rest counted in `<N stderr lines dropped …>`
//! lines; every control character is escaped; `last_stderr` still holds
//! the plugin's last lines. The daemon's own log: `tests/daemon/api.rs`.

use std::time::Instant;

use crate::support::host::{assert_group_gone, fixture, host, one, EASY, LIMIT};
use kaged_host_core::bounds::{STDERR_BURST_BYTES, STDERR_BURST_LINES, STDERR_BYTES_PER_SEC};
use kaged_host_core::bounds::{STDERR_LINES_PER_SEC, STDERR_RING};
use kaged_host_core::{CallError, Direction, Transcript};
use serde_json::{json, Value};

/// Lines the flood writes: far past any burst, bounded.
const FLOOD: u64 = 200_000;

/// The stderr records of `t`.
fn stderr(t: &Transcript) -> Vec<String> {
    t.records()
        .into_iter()
        .filter(|r| r.dir == Direction::PluginStderr)
        .filter_map(|r| r.msg.as_str().map(str::to_string))
        .collect()
}

/// The count a `<N stderr lines dropped (B bytes): …>` line reports.
fn dropped_count(line: &str) -> Option<u64> {
    let rest = line.strip_prefix('<')?;
    let (n, rest) = rest.split_once(' ')?;
    rest.starts_with("stderr lines dropped (")
        .then(|| n.parse().ok())
        .flatten()
}

/// A line of the fixture's flood, as the host shows it: escaped.
fn is_flood_line(line: &str) -> bool {
    line.starts_with("flood ")
        && line.contains("\\recho: plugin.spawned pid=1 \\x1b[31mred\\x1b[0m\\x07")
}

#[tokio::test]
async fn a_stderr_flood_is_rate_limited_counted_and_escaped() {
    let (host, _audit, transcript) = host(EASY);
    let started = Instant::now();
    let s = host.launch(&fixture("stderr-flood")).await.expect("launch");
    let pid = s.pid().expect("pid");
    let v = s
        .call("stderr.flood", Some(json!({"lines": FLOOD})), None)
        .await
        .expect("flooded");
    assert_eq!(v["lines"], FLOOD);
    // Shutdown waits for stderr's end: every line has been judged then.
    assert!(s.shutdown().await.is_clean());
    let secs = started.elapsed().as_secs() + 1;
    let lines = stderr(&transcript);
    assert!(
        lines
            .iter()
            .all(|l| !l.chars().any(|c| c.is_control() && c != '\t')),
        "a control character reached the transcript"
    );
    let passed = lines.iter().filter(|l| is_flood_line(l)).count() as u64;
    let reports: Vec<u64> = lines.iter().filter_map(|l| dropped_count(l)).collect();
    assert!(!reports.is_empty(), "no dropped line: {:?}", &lines[..3]);
    assert_eq!(
        lines.len() as u64,
        passed + reports.len() as u64,
        "a line neither the flood's nor a report"
    );
    // Nothing is lost silently: every line passed or was counted.
    assert_eq!(passed + reports.iter().sum::<u64>(), FLOOD);
    // At most one report a window (a second), and one at the end.
    assert!(
        reports.len() as u64 <= secs + 1,
        "{} reports",
        reports.len()
    );
    // The burst, then the rate: in lines and in bytes.
    let limit = STDERR_BURST_LINES as u64 + STDERR_LINES_PER_SEC as u64 * secs;
    assert!(passed >= STDERR_BURST_LINES as u64, "{passed}");
    assert!(passed <= limit, "{passed} lines passed in {secs} s");
    let bytes: usize = lines
        .iter()
        .filter(|l| is_flood_line(l))
        .map(String::len)
        .sum();
    let byte_limit = STDERR_BURST_BYTES as u64 + STDERR_BYTES_PER_SEC as u64 * secs;
    assert!((bytes as u64) <= byte_limit, "{bytes} bytes in {secs} s");
    assert_group_gone(pid);
}

#[tokio::test]
async fn a_crash_after_a_flood_keeps_its_last_lines() {
    let (host, audit, transcript) = host(EASY);
    let s = host.launch(&fixture("stderr-flood")).await.expect("launch");
    let pid = s.pid().expect("pid");
    let e = s
        .call("stderr.crash", Some(json!({"lines": 20_000})), None)
        .await
        .unwrap_err();
    assert!(matches!(e, CallError::Closed { .. }), "{e:?}");
    assert_eq!(s.wait_exit(LIMIT).await.expect("exit").code, Some(3));
    // The rate limit never hides the last words from the crash audit.
    let crashed = one(&audit, "plugin.crashed");
    let last: Vec<&str> = crashed
        .get("last_stderr")
        .as_array()
        .expect("last_stderr")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(last.len(), STDERR_RING);
    assert_eq!(last.last(), Some(&"last words"));
    assert!(
        last[..STDERR_RING - 1].iter().all(|l| is_flood_line(l)),
        "{last:?}"
    );
    assert_eq!(
        last[0],
        format!(
            "flood {}\\recho: plugin.spawned pid=1 \\x1b[31mred\\x1b[0m\\x07",
            20_000 - STDERR_RING + 1
        )
    );
    // The transcript got the burst and the count of the rest.
    let lines = stderr(&transcript);
    let counted: u64 = lines.iter().filter_map(|l| dropped_count(l)).sum();
    let passed = lines
        .iter()
        .filter(|l| is_flood_line(l) || *l == "last words")
        .count();
    assert_eq!(passed as u64 + counted, 20_001);
    assert!(counted > 0);
    assert_group_gone(pid);
}
