//! Helpers of the hook-firing tests (`tests/firing/`, `tests/cli/project.rs`).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use kaged_host_core::{
    group_alive, AuditEvent, AuditLog, AuditRecord, Direction, HostConfig, HostSim, TimeScale,
    Timeouts, Transcript,
};
use kaged_host_engine::agents::Project;
use kaged_host_engine::{AgentHost, CompactRequest, PluginDirs};
use kaged_plugin_protocol::{Message, MessageRole};
use serde_json::Value;

/// The time scale: `hooks-slow` (hook_timeout_sec 1) times out after
/// 0.2 s; every other fixture has 60 s × 0.2 = 12 s of room. Process start
/// and exit keep their spec budgets ([`host`]).
pub const SCALE: f64 = 0.2;

/// The project id sent in every `_context` (stable for snapshots).
pub const PROJECT_ID: &str = "firing-project";

/// The `hooks-*` fixture plugins.
pub const FIXTURES: [&str; 11] = [
    "hooks-observer",
    "hooks-roleless",
    "hooks-greeter",
    "hooks-malformed",
    "hooks-compactor",
    "hooks-drops-keep",
    "hooks-bad-superseded",
    "hooks-null-compactor",
    "hooks-scripted",
    "hooks-slow",
    "hooks-error",
];

/// `tests/fixtures/...`.
pub fn fixtures() -> PathBuf {
    super::tests_dir().join("fixtures")
}

/// `@kaged/hooks-*` → its fixture directory.
pub fn plugin_dirs() -> PluginDirs {
    PluginDirs::Map(BTreeMap::from_iter(
        FIXTURES
            .iter()
            .map(|n| (format!("@kaged/{n}"), super::host::fixture(n))),
    ))
}

/// A host with in-memory audit and transcript at [`SCALE`], with the
/// plugins' start and exit at their spec budgets (ten Python plugins
/// starting at once can take seconds on a busy machine).
pub fn host() -> (HostSim, AuditLog, Transcript) {
    let audit = AuditLog::memory();
    let transcript = Transcript::memory();
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(SCALE).expect("valid scale"))
            .with_audit(audit.clone())
            .with_transcript(transcript.clone())
            .with_adjust_timeouts(Some(Timeouts::with_spec_startup_and_exit)),
    );
    (host, audit, transcript)
}

/// Start the project `tests/fixtures/projects/<file>`.
pub async fn start(file: &str) -> (AgentHost, AuditLog, Transcript) {
    let (host, audit, transcript) = host();
    let path = fixtures().join("projects").join(file);
    let project = Project::load(&path)
        .unwrap_or_else(|e| panic!("{file} loads: {e:?}"))
        .with_id(PROJECT_ID);
    let agents = AgentHost::start(host, &project, &plugin_dirs())
        .await
        .unwrap_or_else(|e| panic!("{file} starts: {e:?}"));
    (agents, audit, transcript)
}

/// Shut everything down and assert that no plugin process is left.
pub async fn finish(agents: AgentHost) {
    let pids = agents.pids();
    assert!(!pids.is_empty(), "no plugin was running");
    for (name, outcome) in agents.shutdown().await {
        assert!(
            !matches!(outcome, kaged_host_core::ShutdownOutcome::AlreadyEnded),
            "{name} had ended before shutdown"
        );
    }
    for pid in pids {
        assert!(!group_alive(pid), "process group {pid} still has members");
    }
}

/// Compacted: m1, k1 (always-keep), m2. Remaining: m3.
pub fn request(plugin: &str) -> CompactRequest {
    CompactRequest::new(
        plugin,
        vec![
            Message::new("m1", MessageRole::User, "first question"),
            Message::new("k1", MessageRole::System, "pinned rule").keep(),
            Message::new("m2", MessageRole::Assistant, "first answer"),
        ],
        vec![Message::new("m3", MessageRole::User, "latest")],
    )
}

/// The ids of messages.
pub fn ids(messages: &[Message]) -> Vec<&str> {
    messages.iter().map(|m| m.id.as_str()).collect()
}

/// `(event, plugin)` of the records of these kinds, in order.
pub fn trail(records: &[AuditRecord], kinds: &[AuditEvent]) -> Vec<(&'static str, String)> {
    records
        .iter()
        .filter(|r| kinds.contains(&r.event))
        .map(|r| (r.event.as_str(), r.plugin.clone()))
        .collect()
}

/// The records of one kind.
pub fn of(records: &[AuditRecord], kind: AuditEvent) -> Vec<&AuditRecord> {
    records.iter().filter(|r| r.event == kind).collect()
}

/// Every host→plugin request of `method` on the wire, in order.
pub fn sent(transcript: &Transcript, method: &str) -> Vec<Value> {
    transcript
        .records()
        .into_iter()
        .filter(|r| r.dir == Direction::HostToPlugin && r.msg["method"] == method)
        .map(|r| r.msg)
        .collect()
}

/// Snapshot an outcome (`CompactionOutcome::to_json`) with every key
/// kept: the values that differ from run to run (`ts`, `duration_ms`,
/// `request_id`, `pid`) are redacted to `"[key]"`; a `timeout_sec` is the
/// scaled budget, deterministic, and stays as it is (tests assert it with
/// [`hook_budget_secs`]).
#[macro_export]
macro_rules! assert_outcome_snapshot {
    ($name:expr, $out:expr) => {
        insta::assert_json_snapshot!($name, $out.to_json(), {
            ".audit[].ts" => "[ts]",
            ".audit[].duration_ms" => "[duration_ms]",
            ".audit[].request_id" => "[request_id]",
            ".audit[].pid" => "[pid]",
        })
    };
}

/// The effective hook budget of the running plugin `name`, in seconds:
/// its manifest's `hook_timeout_sec` scaled by [`SCALE`] (`time.rs`), what
/// `plugin.hook.timeout`'s `timeout_sec` must say.
pub fn hook_budget_secs(agents: &AgentHost, name: &str) -> f64 {
    let plugin = agents.plugin(name).unwrap_or_else(|| panic!("{name} runs"));
    let timeouts = plugin.timeouts();
    assert_eq!(timeouts.scale.factor(), SCALE);
    timeouts.hook.as_secs_f64()
}
