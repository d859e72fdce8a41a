//! Shared helpers for the conformance suite's own tests; the fail-proof
//! table's types are in [`proofs`].
#![allow(dead_code)]

pub mod proofs;

use std::collections::BTreeMap;
use std::path::PathBuf;

use kaged_conformance::report::{Report, Status};
use kaged_conformance::{run_suite, Options};
use kaged_host_sim::time::{TimeScale, Timeouts};

/// Fast enough for fixtures that hang (request 1.5 s, hook 0.5 s); the
/// waits on process start and exit keep their spec budgets
/// ([`options_at`]).
pub const SCALE: f64 = 0.05;

/// `kaged-host-sim/tests/fixtures/plugins/NAME` (owned by the host-sim).
pub fn host_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../kaged-host-sim/tests/fixtures/plugins")
        .join(name)
}

/// `conformance/tests/fixtures/plugins/NAME` (the suite's own).
pub fn own_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/plugins")
        .join(name)
}

/// Options at `scale`, with `initialize` and `shutdown` at their spec
/// budgets (`Timeouts::with_spec_startup_and_exit`): how long an
/// interpreter takes to start or exit depends on how busy the machine is,
/// not on the plugin, so no verdict may hang on a scaled wait for it.
pub fn options_at(scale: f64) -> Options {
    Options {
        time_scale: TimeScale::new(scale).expect("valid scale"),
        adjust_timeouts: Some(Timeouts::with_spec_startup_and_exit),
        ..Options::default()
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
