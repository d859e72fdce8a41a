//! [`Policy::certify`]: a finished report judged under a policy, a pure
//! step from the report and what the run was given to the outcome.

use crate::catalogue::Level;
use kaged_host_core::CageKind;

use crate::report::{Certification, Outcome, PluginInput, Report, Status};
use crate::selection::Baseline;

use super::{BaselineRule, CageRule, GoldenRule, Policy, Require};

/// What the run was given beside the plugin, that the policy judges.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunInputs<'a> {
    /// The `--known-failing` baseline, if any.
    pub baseline: Option<&'a Baseline>,
    /// The plugin's own conformance profile the run used (its path), if
    /// it used one from the plugin's directory.
    pub plugin_profile: Option<&'a str>,
    /// Whether `--only` or `--skip` left cases out.
    pub narrowed: bool,
}

/// The case ids whose verdict a conformance profile decides.
const PROFILE_CASES: [&str; 3] = ["methods.examples", "methods.invalid_params", "profile."];

impl Policy {
    /// Judge `report` under this policy. Not certified when: a case
    /// failed; under `require: should`, a case warned; a MUST case was
    /// excused by the baseline (never allowed), or a SHOULD case by a
    /// baseline the policy does not honour or through an entry with `*`;
    /// the run was uncaged under `cage: require`; its time scale is not
    /// the policy's; `--only`/`--skip` left cases out; a MUST case could
    /// not be tested (`untestable`). Under `golden:
    /// ignore`, `golden.transcripts` decides nothing.
    pub fn certify(&self, report: &Report, inputs: &RunInputs<'_>) -> Certification {
        let mut reasons = Vec::new();
        let ids = |pick: &dyn Fn(&crate::report::CaseResult) -> bool| -> Vec<String> {
            report
                .cases
                .iter()
                .filter(|c| pick(c))
                .map(|c| c.id.clone())
                .collect()
        };
        let listed =
            |what: &str, ids: &[String]| format!("{} {what}: {}", ids.len(), ids.join(", "));
        // `golden: ignore`: the plugin's own golden transcripts decide
        // nothing.
        let ignored = |c: &crate::report::CaseResult| {
            self.golden == GoldenRule::Ignore && c.id == crate::catalogue::GOLDEN_TRANSCRIPTS.id
        };
        let failed = ids(&|c| c.status == Status::Fail && !ignored(c));
        if !failed.is_empty() {
            reasons.push(listed("MUST case(s) failed", &failed));
        }
        let untested = ids(&|c| {
            c.status == Status::Skip
                && c.level == Level::Must
                && c.kind == Some(crate::catalogue::Kind::Untestable)
        });
        if !untested.is_empty() {
            reasons.push(listed(
                "MUST case(s) could not be tested (the suite could not make their input from the manifest; each case's detail says what to add)",
                &untested,
            ));
        }
        let warned = ids(&|c| {
            c.status == Status::Warn
                && c.known_failure.is_none()
                && c.kind != Some(crate::catalogue::Kind::StaleBaseline)
        });
        if self.require == Require::Should && !warned.is_empty() {
            reasons.push(listed(
                "SHOULD case(s) warned (this policy requires SHOULD cases to pass)",
                &warned,
            ));
        }
        let excused_must =
            ids(&|c| c.known_failure.is_some() && c.level == Level::Must && !ignored(c));
        if !excused_must.is_empty() {
            reasons.push(listed(
                "MUST case(s) failed and are excused only by the plugin's baseline, which never certifies a MUST failure",
                &excused_must,
            ));
        }
        if self.require == Require::Should {
            let excused_should: Vec<String> = report
                .cases
                .iter()
                .filter(|c| c.known_failure.is_some() && c.level == Level::Should)
                .filter(|c| {
                    self.baseline == BaselineRule::None
                        || inputs.baseline.is_none_or(|b| {
                            b.entries_listing(&c.id).iter().any(|e| e.contains('*'))
                        })
                })
                .map(|c| c.id.clone())
                .collect();
            if !excused_should.is_empty() {
                let why = match self.baseline {
                    BaselineRule::None => "SHOULD case(s) warned and are excused only by the plugin's baseline, which this policy does not honour",
                    BaselineRule::Should => "SHOULD case(s) warned and are excused by a baseline entry with `*`, which a policy never honours",
                };
                reasons.push(listed(why, &excused_should));
            }
        }
        if self.cage == CageRule::Require && report.cage != Some(CageKind::Bwrap) {
            reasons.push(format!(
                "the plugin ran uncaged ({}); this policy certifies caged runs only",
                report
                    .cage_line()
                    .unwrap_or_else(|| "no cage was reported".into())
            ));
        }
        if let Some(scale) = self.time_scale {
            if (report.time_scale - scale).abs() > f64::EPSILON {
                reasons.push(format!(
                    "the run's time scale is {}, the policy's {scale}",
                    report.time_scale
                ));
            }
        }
        if inputs.narrowed {
            reasons.push(
                "--only or --skip left cases out: a certification runs every case".to_string(),
            );
        }
        Certification {
            outcome: if reasons.is_empty() {
                Outcome::Certified
            } else {
                Outcome::NotCertified
            },
            policy: self.id.clone(),
            reasons,
            plugin_inputs: plugin_inputs(report, inputs),
        }
    }
}

/// The verdicts that rest on the plugin's own profile and baseline.
fn plugin_inputs(report: &Report, inputs: &RunInputs<'_>) -> Vec<PluginInput> {
    let mut out = Vec::new();
    if let Some(file) = inputs.plugin_profile {
        let cases: Vec<String> = report
            .cases
            .iter()
            .filter(|c| c.status != Status::Skip)
            .filter(|c| PROFILE_CASES.iter().any(|p| c.id.starts_with(p)))
            .map(|c| c.id.clone())
            .collect();
        if !cases.is_empty() {
            out.push(PluginInput {
                what: "profile".into(),
                file: file.to_string(),
                cases,
            });
        }
    }
    if let Some(b) = inputs.baseline {
        let cases: Vec<String> = report
            .cases
            .iter()
            .filter(|c| c.known_failure.is_some())
            .map(|c| c.id.clone())
            .collect();
        if !cases.is_empty() {
            out.push(PluginInput {
                what: "baseline".into(),
                file: b.source.clone(),
                cases,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{CaseResult, PluginInfo};

    fn case(id: &str, level: Level, status: Status, known: bool) -> CaseResult {
        CaseResult {
            id: id.into(),
            title: String::new(),
            level,
            spec: String::new(),
            status,
            duration_ms: 0,
            detail: String::new(),
            audit_events: Vec::new(),
            kind: None,
            caused_by: None,
            ended_by: None,
            known_failure: known.then(|| "kf.txt".to_string()),
            sentence: String::new(),
            transcript_tail: Vec::new(),
        }
    }

    fn report(cases: Vec<CaseResult>) -> Report {
        let info = PluginInfo {
            name: "p".into(),
            version: "1.0.0".into(),
            dir: "p".into(),
        };
        Report::new(info, 1.0, cases).with_cage(CageKind::Bwrap, None, None)
    }

    fn policy(text: &str) -> Policy {
        Policy::parse(text.as_bytes(), "t.yaml", "t").expect("valid")
    }

    #[test]
    fn a_star_baseline_never_certifies_a_must_failure() {
        let b = Baseline::parse("*\n", "kf.txt");
        let r = report(vec![
            case("protocol.ping", Level::Must, Status::Warn, true),
            case("timing.margins", Level::Should, Status::Warn, true),
        ]);
        let inputs = RunInputs {
            baseline: Some(&b),
            ..RunInputs::default()
        };
        let c = policy("policy: 1\nbaseline: should\nrequire: should\n").certify(&r, &inputs);
        assert_eq!(c.outcome, Outcome::NotCertified);
        assert!(
            c.reasons[0].contains("protocol.ping")
                && c.reasons[0].contains("never certifies a MUST"),
            "{:?}",
            c.reasons
        );
        assert!(
            c.reasons[1].contains("timing.margins") && c.reasons[1].contains("`*`"),
            "{:?}",
            c.reasons
        );
        assert_eq!(c.plugin_inputs[0].what, "baseline");
        assert!(
            c.line().starts_with("NOT CERTIFIED under policy t v1"),
            "{}",
            c.line()
        );
    }

    #[test]
    fn should_warnings_count_only_when_the_policy_requires_them() {
        let r = report(vec![case(
            "timing.margins",
            Level::Should,
            Status::Warn,
            false,
        )]);
        let c = policy("policy: 1\n").certify(&r, &RunInputs::default());
        assert_eq!(c.outcome, Outcome::Certified, "{:?}", c.reasons);
        let c = policy("policy: 1\nrequire: should\n").certify(&r, &RunInputs::default());
        assert_eq!(c.outcome, Outcome::NotCertified);
    }

    #[test]
    fn an_exact_should_entry_is_honoured_when_the_policy_says_so() {
        let b = Baseline::parse("timing.margins\n", "kf.txt");
        let r = report(vec![case(
            "timing.margins",
            Level::Should,
            Status::Warn,
            true,
        )]);
        let inputs = RunInputs {
            baseline: Some(&b),
            ..RunInputs::default()
        };
        let p = policy("policy: 1\nrequire: should\nbaseline: should\n");
        assert_eq!(p.certify(&r, &inputs).outcome, Outcome::Certified);
        let p = policy("policy: 1\nrequire: should\n");
        assert_eq!(p.certify(&r, &inputs).outcome, Outcome::NotCertified);
    }

    #[test]
    fn a_differing_golden_is_not_certified_unless_the_policy_ignores_goldens() {
        let r = report(vec![
            case("protocol.ping", Level::Must, Status::Pass, false),
            case("golden.transcripts", Level::Must, Status::Fail, false),
        ]);
        let c = policy("policy: 1\n").certify(&r, &RunInputs::default());
        assert_eq!(c.outcome, Outcome::NotCertified);
        assert!(
            c.reasons[0].contains("golden.transcripts"),
            "{:?}",
            c.reasons
        );
        let c = policy("policy: 1\ngolden: ignore\n").certify(&r, &RunInputs::default());
        assert_eq!(c.outcome, Outcome::Certified, "{:?}", c.reasons);
        // Only the golden case is ignored.
        let r = report(vec![
            case("protocol.ping", Level::Must, Status::Fail, false),
            case("golden.transcripts", Level::Must, Status::Fail, false),
        ]);
        let c = policy("policy: 1\ngolden: ignore\n").certify(&r, &RunInputs::default());
        assert_eq!(
            c.reasons,
            vec!["1 MUST case(s) failed: protocol.ping".to_string()]
        );
    }

    #[test]
    fn an_untestable_must_case_is_not_certified() {
        let mut untested = case(
            "methods.tool_valid_args[p.add]",
            Level::Must,
            Status::Skip,
            false,
        );
        untested.kind = Some(crate::catalogue::Kind::Untestable);
        let mut na = case("hooks.answers", Level::Must, Status::Skip, false);
        na.kind = Some(crate::catalogue::Kind::NotApplicable);
        let c = policy("policy: 1\n")
            .certify(&report(vec![untested, na.clone()]), &RunInputs::default());
        assert_eq!(c.outcome, Outcome::NotCertified);
        assert_eq!(c.reasons.len(), 1, "{:?}", c.reasons);
        assert!(
            c.reasons[0].contains("methods.tool_valid_args[p.add]"),
            "{:?}",
            c.reasons
        );
        let c = policy("policy: 1\n").certify(&report(vec![na]), &RunInputs::default());
        assert_eq!(c.outcome, Outcome::Certified);
    }

    #[test]
    fn uncaged_narrowed_or_rescaled_runs_are_not_certified() {
        let info = PluginInfo {
            name: "p".into(),
            version: "1".into(),
            dir: "p".into(),
        };
        let r = Report::new(info, 0.5, Vec::new()).with_cage(
            CageKind::Off,
            Some("--cage off".into()),
            None,
        );
        let inputs = RunInputs {
            narrowed: true,
            ..RunInputs::default()
        };
        let c = policy("policy: 1\ntime_scale: 1\n").certify(&r, &inputs);
        assert_eq!(c.reasons.len(), 3, "{:?}", c.reasons);
        let c = policy("policy: 1\ncage: any\n").certify(&r, &RunInputs::default());
        assert_eq!(c.outcome, Outcome::Certified, "{:?}", c.reasons);
    }

    #[test]
    fn unknown_keys_and_versions_are_refused() {
        for (text, says) in [
            ("policy: 2\n", "version"),
            ("policy: 1\nrequire: may\n", "require"),
            ("name: x\n", "policy"),
            ("policy: 1\ntime_scale: 3\n", "time_scale"),
        ] {
            let e = Policy::parse(text.as_bytes(), "t.yaml", "t")
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
