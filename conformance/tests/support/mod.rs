//! Shared helpers for the conformance suite's own tests; the fail-proof
//! table's types are in [`proofs`].
#![allow(dead_code)]

pub mod ci_steps;
pub mod proofs;

use std::collections::BTreeMap;
use std::path::PathBuf;

use kaged_conformance::report::{Report, Status};
use kaged_conformance::{run_suite, Options};
use kaged_host_core::time::{TimeScale, Timeouts};

/// The `kaged-conformance` binary of this build.
pub fn cmd() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("kaged-conformance").expect("binary built")
}

/// The workspace root (where the examples and the docs are).
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// A binary of the kit built beside `kaged-conformance` (the README's test
/// command builds every workspace binary): its path, or, when it is not
/// built, a failure under `CI=true` and `None` elsewhere.
pub fn kit_binary(name: &str) -> Option<PathBuf> {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_kaged-conformance")).with_file_name(name);
    let found = if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!(
            "{} is not built (the README's test command builds every workspace binary)",
            bin.display()
        ))
    };
    kaged_test_support::ci::required_in_ci(name, found)
}

/// `PATH` with the kit's binaries first (as a CI job has them after
/// installing them).
pub fn kit_path() -> String {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_kaged-conformance"));
    format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A command's stdout, parsed as the one JSON object it must be.
pub fn stdout_json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

/// Fast enough for fixtures that hang (request 1.5 s, hook 0.5 s); the
/// waits on process start and exit keep their spec budgets
/// ([`options_at`]).
pub const SCALE: f64 = 0.05;

/// `kaged-host-sim/tests/fixtures/plugins/NAME` (owned by the host-sim),
/// staged (see [`staged`]).
pub fn host_fixture(name: &str) -> PathBuf {
    staged().join("host").join(name)
}

/// A copy of `conformance/tests/fixtures/outside/NAME`, a plugin written
/// outside the kit, as its author left it (the directory is the copy's
/// `NAME`, in the temporary directory returned with it).
pub fn outside_fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let from = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/outside")
        .join(name);
    let out = std::process::Command::new("cp")
        .arg("-a")
        .arg(&from)
        .arg(tmp.path())
        .output()
        .expect("cp");
    kaged_test_support::command::assert_success(format!("copy {}", from.display()), &out);
    let dir = tmp.path().join(name);
    (tmp, dir)
}

/// `conformance/tests/fixtures/plugins/NAME` (the suite's own), staged.
pub fn own_fixture(name: &str) -> PathBuf {
    staged().join("own").join(name)
}

/// Both fixture trees, copied once per test process under
/// `CARGO_TARGET_TMPDIR` (`host/`, `own/`) with `_lib/*.py` inside every
/// plugin directory: caged, a plugin sees nothing outside its directory,
/// so the fixtures' `../_lib` is not there. Copies left by test processes
/// that are gone are removed.
fn staged() -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kaged-conformance-fixtures");
        if let Ok(rd) = std::fs::read_dir(&base) {
            for e in rd.flatten() {
                let gone = e
                    .file_name()
                    .to_str()
                    .and_then(|n| n.parse::<i32>().ok())
                    .and_then(rustix::process::Pid::from_raw)
                    .is_some_and(|pid| rustix::process::test_kill_process(pid).is_err());
                if gone {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let root = base.join(std::process::id().to_string());
        let _ = std::fs::remove_dir_all(&root);
        let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        for (name, source) in [
            (
                "host",
                here.join("../kaged-host-sim/tests/fixtures/plugins"),
            ),
            ("own", here.join("tests/fixtures/plugins")),
        ] {
            kaged_host_core::testing::stage_plugin_tree(&source, "_lib", &root.join(name))
                .expect("stage the fixture plugins");
        }
        std::fs::canonicalize(&root).expect("staged fixtures")
    })
    .clone()
}

/// Options at `scale`, with `initialize` and `shutdown` at their spec
/// budgets (`Timeouts::with_spec_startup_and_exit`): how long an
/// interpreter takes to start or exit depends on how busy the machine is,
/// not on the plugin, so no verdict may hang on a scaled wait for it.
pub fn options_at(scale: f64) -> Options {
    Options {
        time_scale: TimeScale::new(scale).expect("valid scale"),
        adjust_timeouts: Some(spec_budgets),
        ..Options::default()
    }
}

/// The waits the suite's own tests keep at their spec budgets while the
/// rest is scaled: process start and exit
/// ([`Timeouts::with_spec_startup_and_exit`]), `ping` and the hooks, whose
/// 250 and 500 ms at [`SCALE`] a plugin starved on a busy machine misses
/// (with twice as many tests as cores at once, `protocol.ping_during_slow_call`
/// failed, and `timing.margins` warned of hooks answered in 260 ms): no
/// verdict hangs on how fast the machine is.
pub fn spec_budgets(t: Timeouts) -> Timeouts {
    let unscaled = |d: std::time::Duration| d.div_f64(t.scale.factor());
    Timeouts {
        ping: unscaled(t.ping),
        hook: unscaled(t.hook),
        ..t.with_spec_startup_and_exit()
    }
}

/// Options at [`SCALE`].
pub fn options() -> Options {
    options_at(SCALE)
}

/// Run the suite as a library call.
pub fn run(dir: PathBuf) -> Report {
    run_suite(&dir, &options()).expect("the suite runs")
}

/// Cases that did not pass or skip: id -> status.
pub fn broken(r: &Report) -> BTreeMap<String, Status> {
    r.cases
        .iter()
        .filter(|c| matches!(c.status, Status::Fail | Status::Warn))
        .map(|c| (c.id.clone(), c.status))
        .collect()
}
