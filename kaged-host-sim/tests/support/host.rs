//! Fixture plugins, a host with in-memory audit and transcript, time scales
//! and process checks, for every test that launches plugins.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use kaged_host_sim::{
    group_alive, AuditLog, AuditRecord, HostConfig, HostSim, TimeScale, Transcript,
};

/// Scale for tests that expect a timeout to fire (10 s initialize -> 0.5 s).
pub const FAST: f64 = 0.05;
/// Scale for tests where things should succeed (leaves room on a busy box).
pub const EASY: f64 = 0.25;

/// `tests/fixtures/plugins/NAME`, staged: see [`plugins_root`].
pub fn fixture(name: &str) -> PathBuf {
    plugins_root().join(name)
}

/// `tests/fixtures/plugins`, copied once per test process under
/// `CARGO_TARGET_TMPDIR` with `_lib/kproto.py` inside every plugin
/// directory: the cage shows a plugin nothing outside its own directory,
/// so the fixtures' `../_lib` is not there when caged. Copies left by
/// test processes that are gone are removed.
pub fn plugins_root() -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kaged-fixtures");
        if let Ok(rd) = std::fs::read_dir(&base) {
            for e in rd.flatten() {
                let gone = e
                    .file_name()
                    .to_str()
                    .and_then(|n| n.parse::<u32>().ok())
                    .is_some_and(|pid| !process_exists(pid));
                if gone {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let root = base.join(std::process::id().to_string());
        let _ = std::fs::remove_dir_all(&root);
        let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plugins");
        kaged_host_sim::testing::stage_plugin_tree(&source, "_lib", &root)
            .expect("stage the fixture plugins");
        std::fs::canonicalize(&root).expect("staged fixtures")
    })
    .clone()
}

/// A host with in-memory audit and transcript.
pub fn host(scale: f64) -> (HostSim, AuditLog, Transcript) {
    let audit = AuditLog::memory();
    let transcript = Transcript::memory();
    let host = HostSim::new(HostConfig {
        time_scale: TimeScale::new(scale).expect("valid scale"),
        audit: audit.clone(),
        transcript: transcript.clone(),
        ..HostConfig::default()
    });
    (host, audit, transcript)
}

/// The single event named `name`, panicking when there is not exactly one.
pub fn one(audit: &AuditLog, name: &str) -> AuditRecord {
    let found: Vec<AuditRecord> = audit
        .events()
        .into_iter()
        .filter(|r| r.event.as_str() == name)
        .collect();
    assert_eq!(found.len(), 1, "expected one {name} in {:?}", audit.names());
    found.into_iter().next().expect("one event")
}

/// Assert that no process of group `pgid` is left (kill(-pgid, 0) gives
/// ESRCH). The host reaps before returning, so this holds at once.
pub fn assert_group_gone(pgid: u32) {
    assert!(!group_alive(pgid), "process group {pgid} still has members");
}

/// Whether process `pid` exists.
pub fn process_exists(pid: u32) -> bool {
    rustix::process::test_kill_process(
        rustix::process::Pid::from_raw(pid as i32).expect("non-zero pid"),
    )
    .is_ok()
}

/// A bound for waits in tests; never asserted as a duration.
pub const LIMIT: Duration = Duration::from_secs(10);
