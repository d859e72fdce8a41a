//! The suite judges the chaos catalogue (issue 19): for every misbehaviour
//! of `kaged_test_support::chaos` that the host classifies, the chaos
//! plugin doing it (alone, at the catalogue's moment) fails the case the
//! catalogue names (warns, for a SHOULD case); one catalogue serves the
//! host's chaos suite and the suite's self-test.

mod support;

use std::path::Path;

use kaged_test_support::chaos::{stage, Misbehaviour, Plan, When};
use serde_json::Value;
use support::cmd;

#[test]
fn every_classified_misbehaviour_fails_its_case() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../kaged-host-sim/tests/fixtures/chaos");
    let mut wrong = Vec::new();
    let mut judged = 0;
    for m in Misbehaviour::ALL {
        let Some((when, case)) = m.judged_by() else {
            continue;
        };
        judged += 1;
        let plan = Plan {
            seed: 1,
            steps: vec![(*m, when)],
        };
        let dir = stage(&fixture, &plan).expect("stage the chaos plugin");
        let mut c = cmd();
        c.args([
            "run",
            "--time-scale",
            "0.1",
            "--format",
            "json",
            "--only",
            case,
        ]);
        if when == When::OnCall {
            // The call that makes it misbehave.
            c.args(["--only", "methods.answers[*]"]);
        }
        let out = c.arg(dir.path()).output().expect("runs");
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{}: no JSON report ({e})", m.as_str()));
        let status = report["cases"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["id"] == case))
            .map(|c| c["status"].as_str().unwrap_or_default().to_string())
            .unwrap_or_else(|| format!("no case {case}"));
        let level_should = report["cases"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["id"] == case))
            .is_some_and(|c| c["level"] == "SHOULD");
        let want = if level_should { "warn" } else { "fail" };
        if status != want {
            wrong.push(format!(
                "{}@{}: {case} is {status}, not {want}",
                m.as_str(),
                when.as_str()
            ));
        }
    }
    assert!(
        judged >= 10,
        "the catalogue classifies {judged} misbehaviours"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
