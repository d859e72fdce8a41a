//! The fuzzer calls a custom method with params generated from its
//! conformance profile's `params_schema` (valid and broken, edges
//! included), not only with `{}`: a planted bug only real params reach
//! (`tally.add` crashes on a count of zero) is found and shrunk to that
//! call. Bounded by sequences (`max_cases`), never by wall time.

mod support;

use kaged_conformance::fuzz::{fuzz, FuzzOptions, Op, Property};
use kaged_host_core::time::TimeScale;
use serde_json::json;
use support::own_fixture;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_only_profile_params_reach_is_found_and_shrunk_to_that_call() {
    let opts = FuzzOptions {
        // No time bound: the run ends by `max_cases`.
        duration: None,
        max_cases: Some(60),
        seed: 3,
        time_scale: TimeScale::new(0.1).expect("a scale"),
        soak_calls: 0,
        ..FuzzOptions::default()
    };
    let outcome = fuzz(&own_fixture("fuzz-profile-param"), &opts)
        .await
        .expect("the fuzzer runs");
    let failure = outcome
        .failure
        .unwrap_or_else(|| panic!("no failure in {} sequences", outcome.cases));
    assert_eq!(
        failure.broken.property,
        Property::NoCrash,
        "{:?}",
        failure.broken
    );
    let last = failure.ops.last().expect("a shrunk sequence");
    let calls_zero = |op: &Op| {
        matches!(op, Op::Method { method, params, valid: Some(true) }
            if method == "tally.add" && params == &json!({"count": 0}))
    };
    let found = match last {
        Op::Together(ops) => ops.iter().any(calls_zero),
        op => calls_zero(op),
    };
    assert!(
        found,
        "the crashing call is tally.add {{\"count\":0}}: {:?}",
        failure.ops
    );
    let script = failure.script().expect("the replay script");
    assert!(script.contains("count: 0"), "{script}");
}
