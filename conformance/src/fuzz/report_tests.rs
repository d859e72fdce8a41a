//! Verdicts from made-up outcomes: what ran decides pass or skip.

use std::time::Duration;

use kaged_plugin_protocol::manifest::Manifest;

use super::*;
use crate::fuzz::{Coverage, Op, SoakStop};

fn outcome(slope: Option<Slope>) -> FuzzOutcome {
    let manifest = Manifest::from_yaml_str(
        "name: m\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [./m]\ncapabilities: []\n",
    )
    .expect("a manifest");
    let mut coverage = Coverage::new(&manifest);
    coverage.add(&[Op::Ping, Op::Ping]);
    FuzzOutcome {
        plugin: ("m".into(), "1.0.0".into()),
        seed: 1,
        cases: 1,
        ops: 2,
        coverage,
        failure: None,
        slope,
        elapsed: Duration::ZERO,
        cage: kaged_host_core::CageKind::Bwrap,
        cage_reason: None,
        cage_policy: None,
    }
}

fn slope(samples: Vec<(usize, u64)>, calls: usize, stopped: Option<SoakStop>) -> Slope {
    Slope {
        op: "ping".into(),
        requested: 100,
        calls,
        kib_per_1k_calls: 0.0,
        warmup: 0,
        samples,
        stopped,
        bench: "kaged-host-sim bench m --calls 100".into(),
    }
}

fn case(r: &Report, p: Property) -> &CaseResult {
    r.cases
        .iter()
        .find(|c| c.id == p.id())
        .unwrap_or_else(|| panic!("no {}", p.id()))
}

#[test]
fn fewer_than_two_rss_samples_skip_memory_bounded_with_the_reason() {
    for samples in [vec![], vec![(0, 1000)]] {
        let r = fuzz_report(&outcome(Some(slope(samples, 100, None))), "m", 1.0, "");
        let c = case(&r, Property::MemoryBounded);
        assert_eq!(c.status, Status::Skip, "{}", c.detail);
        assert!(
            c.detail.contains("fewer than two RSS samples"),
            "{}",
            c.detail
        );
    }
    let r = fuzz_report(
        &outcome(Some(slope(vec![(0, 1000), (100, 1000)], 100, None))),
        "m",
        1.0,
        "",
    );
    assert_eq!(case(&r, Property::MemoryBounded).status, Status::Pass);
}

#[test]
fn a_soak_that_stopped_fails_the_property_it_broke_and_counts_the_calls_made() {
    let stop = SoakStop {
        property: Property::NoCrash,
        call: 41,
        detail: "m.t: plugin is not running (exit code 71; last stderr line: \"boom\")".into(),
    };
    let samples = vec![(0, 1000), (10, 1000), (20, 1000), (30, 1000), (40, 1000)];
    let r = fuzz_report(&outcome(Some(slope(samples, 40, Some(stop)))), "m", 1.0, "");
    let c = case(&r, Property::NoCrash);
    assert_eq!(c.status, Status::Fail, "{}", c.detail);
    assert!(
        c.detail.contains("stopped at call 41 of 100 (40 answered)")
            && c.detail.contains("exit code 71")
            && c.detail.contains("\"boom\""),
        "{}",
        c.detail
    );
    let m = case(&r, Property::MemoryBounded);
    assert_eq!(m.status, Status::Pass, "{}", m.detail);
    assert!(m.detail.contains("over 40 call(s)"), "{}", m.detail);
    assert_eq!(r.exit_code(false), 1);
}

#[test]
fn a_property_no_operation_exercised_is_skipped_not_held() {
    let r = fuzz_report(&outcome(None), "m", 1.0, "");
    for p in [
        Property::ValidArgsAccepted,
        Property::InvalidConfigRejected,
        Property::HookAnswers,
        Property::CompactorContract,
    ] {
        let c = case(&r, p);
        assert_eq!(c.status, Status::Skip, "{p:?}: {}", c.detail);
        assert!(c.detail.starts_with("not applicable: "), "{}", c.detail);
    }
    let c = case(&r, Property::NoCrash);
    assert_eq!(c.status, Status::Pass, "{}", c.detail);
    assert!(
        c.detail.contains("held over 2 operation(s)"),
        "{}",
        c.detail
    );
}
