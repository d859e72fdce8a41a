//! Shared helpers for the conformance suite's own tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use kaged_conformance::report::{render_human, Report, Status};
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

/// Options at [`SCALE`].
pub fn options() -> Options {
    Options {
        time_scale: TimeScale::new(SCALE).expect("valid scale"),
        ..Options::default()
    }
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

/// One expected non-passing case: id, status, an audit event it must list.
pub type Expected = (&'static str, Status, Option<&'static str>);

/// What the host-sim fixtures' shared helper (`_lib/kproto.py`) gets wrong
/// for every fixture built on it: it ignores malformed JSON and batches,
/// answers calls before `initialized`, and answers `config.update` with
/// -32601.
pub const KPROTO_GAPS: &[Expected] = &[
    ("protocol.not_initialized", Status::Warn, None),
    ("protocol.batch_rejected", Status::Fail, None),
    ("protocol.parse_error", Status::Fail, None),
    ("config.update_accepted", Status::Warn, None),
];

/// Assert that exactly `expected` cases fail or warn, each listing its
/// audit event.
pub fn assert_broken(r: &Report, expected: &[Expected]) {
    let want: BTreeMap<String, Status> = expected
        .iter()
        .map(|(id, s, _)| (id.to_string(), *s))
        .collect();
    assert_eq!(broken(r), want, "\n{}", render_human(r, false, true));
    for (id, _, event) in expected {
        if let Some(event) = event {
            let c = r.case(id);
            assert!(
                c.audit_events.iter().any(|e| e == event),
                "{id} lacks audit event {event}: {:?}",
                c.audit_events
            );
        }
    }
}
