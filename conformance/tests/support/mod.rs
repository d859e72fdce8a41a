//! Shared helpers for the conformance suite's own tests; the fail-proof
//! table's types are in [`proofs`].
#![allow(dead_code)]

pub mod proofs;

use std::collections::BTreeMap;
use std::path::PathBuf;

use kaged_conformance::report::{Report, Status};
use kaged_conformance::{run_suite, Options};
use kaged_host_sim::time::TimeScale;

/// Fast enough for fixtures that hang (initialize 0.5 s, request 1.5 s).
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

/// Options at `scale`.
pub fn options_at(scale: f64) -> Options {
    Options {
        time_scale: TimeScale::new(scale).expect("valid scale"),
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
