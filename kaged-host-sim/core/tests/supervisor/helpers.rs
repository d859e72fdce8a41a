//! Helpers for the supervisor tests.

use std::path::{Path, PathBuf};

use kaged_host_core::{AuditLog, AuditRecord, PluginState, Supervisor};
use serde_json::json;

use crate::support::host::{assert_group_gone, fixture, host_scaled, LIMIT};

/// A supervisor at `scale` (its backoff, health and request timeouts),
/// with process start and exit at their spec budgets.
pub fn supervise(dir: &Path, scale: f64) -> (Supervisor, AuditLog) {
    let (host, audit, _t) = host_scaled(scale);
    (Supervisor::new(host, dir), audit)
}

/// Wait (bounded by [`LIMIT`]) until `pred` holds for the state.
pub async fn wait_until(sup: &Supervisor, pred: impl Fn(PluginState) -> bool) -> PluginState {
    let mut rx = sup.subscribe();
    let r = tokio::time::timeout(LIMIT, rx.wait_for(|s| pred(*s))).await;
    match r {
        Ok(Ok(s)) => *s,
        _ => panic!(
            "state never matched; stuck at {} ({} spawns)",
            sup.state(),
            sup.spawn_attempts()
        ),
    }
}

pub async fn wait_state(sup: &Supervisor, want: PluginState) {
    wait_until(sup, |s| s == want).await;
}

/// Wait until a process other than `old` is running.
pub async fn wait_restarted(sup: &Supervisor, old: u32) -> u32 {
    wait_until(sup, |s| s == PluginState::Running && pid(sup) != Some(old)).await;
    pid(sup).expect("a running process")
}

pub fn pid(sup: &Supervisor) -> Option<u32> {
    sup.current().and_then(|s| s.pid())
}

/// The audit records of `audit` but the `config.update` each process gets
/// right after its handshake (ADDENDUM §15; its position is tested in
/// `operator.rs`): what the supervisor's lifecycle tests compare.
pub fn lifecycle(audit: &AuditLog) -> Vec<AuditRecord> {
    audit
        .events()
        .into_iter()
        .filter(|r| r.get("method") != "config.update")
        .collect()
}

pub fn names(events: &[AuditRecord]) -> Vec<&'static str> {
    events.iter().map(|r| r.event.as_str()).collect()
}

pub fn of<'a>(events: &'a [AuditRecord], name: &str) -> Vec<&'a AuditRecord> {
    events.iter().filter(|r| r.event.as_str() == name).collect()
}

/// Every pid the audit log names (every generation); none may be left.
pub fn assert_no_generation_left(audit: &AuditLog) -> usize {
    let mut pids: Vec<u64> = audit
        .events()
        .iter()
        .filter_map(|r| r.get("pid").as_u64())
        .collect();
    pids.sort_unstable();
    pids.dedup();
    for p in &pids {
        assert_group_gone(*p as u32);
    }
    pids.len()
}

/// A copy of `supervisor-flaky` in a temp dir, failing its first
/// `fail_starts` starts; returns the dir and the counter file (in a
/// directory of its own that the manifest grants `write:fs:`: the plugin
/// runs caged).
pub fn staged_flaky(tmp: &Path, fail_starts: u32) -> (PathBuf, PathBuf) {
    let src = fixture("supervisor-flaky");
    let dir = tmp.join("supervisor-flaky");
    std::fs::create_dir(&dir).expect("mkdir");
    for f in ["kaged-plugin.yaml", "plugin.py"] {
        std::fs::copy(src.join(f), dir.join(f)).expect("copy");
    }
    let state = tmp.join("state");
    std::fs::create_dir(&state).expect("mkdir");
    let counter = state.join("starts");
    let manifest = std::fs::read_to_string(dir.join("kaged-plugin.yaml")).expect("read");
    assert!(manifest.contains("\"@COUNTER@\"") && manifest.contains("FAIL_STARTS: \"2\""));
    assert!(manifest.contains("capabilities: []"));
    let grant = json!([format!("write:fs:{}", state.display())]).to_string();
    let manifest = manifest
        .replace("capabilities: []", &format!("capabilities: {grant}"))
        .replace(
            "\"@COUNTER@\"",
            &json!(counter.to_string_lossy()).to_string(),
        )
        .replace(
            "FAIL_STARTS: \"2\"",
            &format!("FAIL_STARTS: \"{fail_starts}\""),
        );
    std::fs::write(dir.join("kaged-plugin.yaml"), manifest).expect("write");
    (dir, counter)
}
