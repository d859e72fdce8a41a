//! Helpers of the hook-firing tests (`tests/firing/`, `tests/cli/project.rs`).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use kaged_host_sim::{
    group_alive, AgentHost, AuditEvent, AuditLog, AuditRecord, CompactRequest, Direction,
    HostConfig, HostSim, PluginDirs, TimeScale, Transcript,
};
use kaged_plugin_protocol::{Message, MessageRole};
use serde_json::Value;

/// The time scale: `hooks-slow` (hook_timeout_sec 1) times out after
/// 0.2 s; every other fixture has 60 s × 0.2 = 12 s of room.
pub const SCALE: f64 = 0.2;

/// The project id sent in every `_context` (stable for snapshots).
pub const PROJECT_ID: &str = "firing-project";

/// The `hooks-*` fixture plugins.
pub const FIXTURES: [&str; 10] = [
    "hooks-observer",
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
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// `@kaged/hooks-*` → its fixture directory.
pub fn plugin_dirs() -> PluginDirs {
    PluginDirs::Map(BTreeMap::from_iter(
        FIXTURES
            .iter()
            .map(|n| (format!("@kaged/{n}"), super::host::fixture(n))),
    ))
}

/// A host with in-memory audit and transcript at [`SCALE`].
pub fn host() -> (HostSim, AuditLog, Transcript) {
    let audit = AuditLog::memory();
    let transcript = Transcript::memory();
    let host = HostSim::new(HostConfig {
        time_scale: TimeScale::new(SCALE).expect("valid scale"),
        audit: audit.clone(),
        transcript: transcript.clone(),
        ..HostConfig::default()
    });
    (host, audit, transcript)
}

/// Start the project `tests/fixtures/projects/<file>`.
pub async fn start(file: &str) -> (AgentHost, AuditLog, Transcript) {
    let (host, audit, transcript) = host();
    let path = fixtures().join("projects").join(file);
    let agents = AgentHost::from_files(host, &path, &plugin_dirs(), None)
        .await
        .unwrap_or_else(|e| panic!("{file} starts: {e:?}"))
        .with_project_id(PROJECT_ID);
    (agents, audit, transcript)
}

/// Shut everything down and assert that no plugin process is left.
pub async fn finish(agents: AgentHost) {
    let pids = agents.pids();
    assert!(!pids.is_empty(), "no plugin was running");
    for (name, outcome) in agents.shutdown().await {
        assert!(
            !matches!(outcome, kaged_host_sim::ShutdownOutcome::AlreadyEnded),
            "{name} had ended before shutdown"
        );
    }
    for pid in pids {
        assert!(!group_alive(pid), "process group {pid} still has members");
    }
}

/// Compacted: m1, k1 (always-keep), m2. Remaining: m3.
pub fn request(session: &str) -> CompactRequest {
    CompactRequest::new(
        session,
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

/// An outcome as a stable JSON value for snapshots: message ids kept, the
/// audit records without their timing and correlation fields.
pub fn outcome_snapshot(out: &kaged_host_sim::CompactionOutcome) -> Value {
    let mut v = out.to_json();
    if let Some(records) = v.get_mut("audit").and_then(Value::as_array_mut) {
        for r in records.iter_mut() {
            if let Some(o) = r.as_object_mut() {
                for key in ["ts", "duration_ms", "request_id", "timeout_sec", "pid"] {
                    o.remove(key);
                }
            }
        }
    }
    v
}
