//! Fixture plugins, a host with in-memory audit and transcript, time scales
//! and process checks, for every test that launches plugins.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use kaged_host_core::{
    group_alive, AuditLog, AuditRecord, HostConfig, HostSim, TimeScale, Timeouts, Transcript,
};

/// Scale for a test that waits out the `initialize` timeout (10 s ->
/// 0.5 s) and nothing else. A test that waits out another timeout uses
/// [`host_with`] instead, so that the plugin's start keeps its budget.
pub const FAST: f64 = 0.05;
/// Scale for tests where no timeout must elapse: the spec's own budgets,
/// which a busy machine does not exceed (a Python fixture can take seconds
/// to start under load) and which cost nothing, as nothing waits them out.
pub const EASY: f64 = 1.0;
/// The budget of the one wait a [`host_with`] test waits out.
pub const SHORT: Duration = Duration::from_millis(250);

/// `tests/fixtures/plugins/NAME`, staged: see [`plugins_root`].
pub fn fixture(name: &str) -> PathBuf {
    plugins_root().join(name)
}

/// `tests/fixtures/plugins`, copied once per test process under
/// `CARGO_TARGET_TMPDIR` (or `$KAGED_TEST_FIXTURES_BASE`) with `_lib/kproto.py` inside every plugin
/// directory: the cage shows a plugin nothing outside its own directory,
/// so the fixtures' `../_lib` is not there when caged. Copies left by
/// test processes that are gone are removed.
pub fn plugins_root() -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        // Another base when the tests run again as an ordinary user, who
        // cannot write under the root-owned target directory
        // (`support::as_nobody`).
        let base = std::env::var_os(super::as_nobody::FIXTURES_BASE_ENV).map_or_else(
            || PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kaged-fixtures"),
            PathBuf::from,
        );
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
        let source = super::tests_dir().join("fixtures/plugins");
        kaged_host_core::testing::stage_plugin_tree(&source, "_lib", &root)
            .expect("stage the fixture plugins");
        std::fs::canonicalize(&root).expect("staged fixtures")
    })
    .clone()
}

/// A host with in-memory audit and transcript.
pub fn host(scale: f64) -> (HostSim, AuditLog, Transcript) {
    let audit = AuditLog::memory();
    let transcript = Transcript::memory();
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(scale).expect("valid scale"))
            .with_audit(audit.clone())
            .with_transcript(transcript.clone()),
    );
    (host, audit, transcript)
}

/// A host at `scale` whose process start and exit keep their spec budgets
/// (`Timeouts::with_spec_startup_and_exit`): for tests that wait out
/// scaled timeouts or backoffs of plugins that must start (and may take
/// seconds to, on a busy machine) and exit.
pub fn host_scaled(scale: f64) -> (HostSim, AuditLog, Transcript) {
    let (host, audit, transcript) = host(scale);
    let host = HostSim::new(
        host.config()
            .clone()
            .with_adjust_timeouts(Some(Timeouts::with_spec_startup_and_exit)),
    );
    (host, audit, transcript)
}

/// A host at the spec's budgets ([`EASY`]) but for what `adjust` sets:
/// the timeout a test waits out is [`SHORT`], every wait that must not
/// elapse keeps its spec budget, whatever the machine's speed.
pub fn host_with(adjust: fn(Timeouts) -> Timeouts) -> (HostSim, AuditLog, Transcript) {
    let (host, audit, transcript) = host(EASY);
    let host = HostSim::new(host.config().clone().with_adjust_timeouts(Some(adjust)));
    (host, audit, transcript)
}

/// The single event named `name`, panicking when there is not exactly one.
/// The records of the first `config.update`, which every launch sends
/// right after `initialized` (ADDENDUM §12, §15), are not counted.
pub fn one(audit: &AuditLog, name: &str) -> AuditRecord {
    let found: Vec<AuditRecord> = audit
        .events()
        .into_iter()
        .filter(|r| r.event.as_str() == name && r.get("method") != "config.update")
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

/// A copy of the `shell-adapter` fixture at `version` (its manifest and its
/// initialize answer both say it), for upgrade tests.
pub fn shell_adapter_at(version: &str) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    for file in ["kaged-plugin.yaml", "plugin.sh"] {
        let text = std::fs::read_to_string(fixture("shell-adapter").join(file)).expect("read");
        std::fs::write(dir.path().join(file), text.replace("0.1.0", version)).expect("write");
    }
    let script = dir.path().join("plugin.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

/// The `shell-adapter` fixture (the spec's shell plugin) copied into `dir`
/// as the plugin `name`: its manifest's name and the name its `initialize`
/// answers.
pub fn shell_adapter_as(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).expect("mkdir");
    for file in ["kaged-plugin.yaml", "plugin.sh"] {
        let text = std::fs::read_to_string(fixture("shell-adapter").join(file)).expect("read");
        let to = dir.join(file);
        std::fs::write(&to, text.replace("my-simple-adapter", name)).expect("write");
        let mode = std::fs::metadata(fixture("shell-adapter").join(file))
            .expect("meta")
            .permissions();
        std::fs::set_permissions(&to, mode).expect("chmod");
    }
}
