//! [`finalize`]: a case's verdict made its reported result, as one pure
//! step over the case's catalogue row, the verdict its check returned, the
//! evidence it left ([`Evidence`]) and the baseline in force. The
//! [`Recorder`](super::recorder::Recorder) gathers the evidence, calls it,
//! then keeps the transcript and streams the result.
//!
//! In order: the case's level makes a broken SHOULD rule a warning; the
//! baseline makes a listed failure a known one (and an exact entry that
//! passes stale); a pass on an error answer the cage caused fails (the
//! call fails in the daemon's cage too); a failure gets the cage's
//! diagnosis, its kind (a missing capability, the cage, else the case's
//! own refined by what ended its wait), a hint, and the rule it breaks.

use std::time::Duration;

use kaged_host_core::{AuditRecord, TranscriptRecord};

use super::diagnosis::CageDiagnosis;
use super::ended::ended_by;
use super::roots::{hint, missing_capability, refine, RootKey};
use super::verdict::Verdict;
use crate::catalogue::{CaseDef, Kind, Level};
use crate::report::{CaseResult, Status};
use crate::selection::{Baseline, STALE_DETAIL};

/// How many transcript lines a failure shows.
const TAIL: usize = 8;
/// A transcript line shown in a failure is cut to this many chars.
const TAIL_CHARS: usize = 300;

/// What a case left to be judged by.
#[derive(Debug, Default)]
pub(crate) struct Evidence {
    /// Its wire records, numbered from 1.
    pub records: Vec<TranscriptRecord>,
    /// Its audit events.
    pub events: Vec<AuditRecord>,
    /// How long it ran.
    pub took: Duration,
    /// What the cage explains of the plugin's error answers (`None`
    /// uncaged, or nothing it explains).
    pub cage_in_answers: Option<CageDiagnosis>,
    /// What the cage explains of its error answers and its stderr.
    pub cage_in_output: Option<CageDiagnosis>,
}

/// A case's result, and what its failure would be the root of.
#[derive(Debug)]
pub(crate) struct Finalized {
    /// The result as reported.
    pub result: CaseResult,
    /// The key that links it to the failures that follow from the same
    /// fault (`roots::link`).
    pub root: Option<RootKey>,
}

/// The result of case `id` (of `case`) whose check returned `verdict`,
/// judged by `evidence` under `baseline`.
pub(crate) fn finalize(
    case: &CaseDef,
    id: String,
    verdict: Verdict,
    evidence: &Evidence,
    baseline: Option<&Baseline>,
) -> Finalized {
    let (mut status, mut detail, mut kind, caused_by) = match verdict {
        Verdict::Pass(d) => (Status::Pass, d, None, None),
        Verdict::Skip(f) => (Status::Skip, f.detail, f.kind, f.caused_by),
        Verdict::Fail(f) => (broken(case.level), f.detail, f.kind, f.caused_by),
    };
    let mut known_failure = None;
    if let Some(b) = baseline.filter(|b| b.lists(&id)) {
        match status {
            Status::Fail | Status::Warn => {
                status = Status::Warn;
                known_failure = Some(b.source.clone());
                detail = format!("known failure (listed in {}): {detail}", b.source);
            }
            // A pattern with `*` lists what may fail; only an exact id
            // that passes again is stale.
            Status::Pass if b.entries_listing(&id).iter().all(|e| e.contains('*')) => {}
            Status::Pass => {
                status = Status::Warn;
                kind = Some(Kind::StaleBaseline);
                detail = format!(
                    "{STALE_DETAIL}: listed in {} as known-failing, but it now passes: remove it from {}",
                    b.source, b.source
                );
            }
            Status::Skip => {}
        }
    }
    let ended = ended_by(&evidence.records, &evidence.events);
    // Passed on an error answer the cage caused: the same call fails in
    // the daemon's cage, whatever the case accepts.
    if status == Status::Pass && evidence.cage_in_answers.is_some() {
        status = broken(case.level);
        kind = Some(Kind::CageDenied);
        detail = format!(
            "expected: the plugin works in its cage; actual: it answered an error the \
             cage caused, so the call fails in the daemon too ({detail})"
        );
    }
    let mut root = None;
    if matches!(status, Status::Fail | Status::Warn) {
        let cage = evidence.cage_in_output.as_ref();
        if let Some(d) = cage {
            if !detail.contains(d.text.as_str()) {
                detail.push('\n');
                detail.push_str(&d.text);
            }
        }
        let missing = missing_capability(&evidence.events);
        root = missing
            .clone()
            .map(RootKey::Capability)
            .or_else(|| cage.map(|d| RootKey::Grant(d.grant.clone())));
        let k = *kind.get_or_insert(if missing.is_some() {
            Kind::CapabilityNotDeclared
        } else if cage.is_some() {
            Kind::CageDenied
        } else {
            refine(case.kind, ended)
        });
        if let Some(h) = hint(k, &evidence.records) {
            detail.push('\n');
            detail.push_str(h);
        }
    }
    if status == Status::Skip && kind.is_none() {
        kind = Some(Kind::NotApplicable);
    }
    let sentence = match kind {
        Some(k) if matches!(status, Status::Fail | Status::Warn) => case.rule_broken(k),
        _ => case.sentence,
    };
    let records = &evidence.records;
    let transcript_tail = records
        .iter()
        .skip(records.len().saturating_sub(TAIL))
        .map(|r| kaged_plugin_protocol::text::cut(&r.to_json().to_string(), TAIL_CHARS))
        .collect();
    let result = CaseResult {
        id,
        title: case.title.to_string(),
        level: case.level,
        spec: case.spec.to_string(),
        status,
        duration_ms: evidence.took.as_millis() as u64,
        detail,
        audit_events: evidence
            .events
            .iter()
            .map(|e| e.event.as_str().to_string())
            .collect(),
        kind,
        caused_by,
        ended_by: Some(ended),
        known_failure,
        sentence: sentence.to_string(),
        transcript_tail,
    };
    Finalized { result, root }
}

/// The status of a broken rule at `level`: a MUST fails, a SHOULD warns.
fn broken(level: Level) -> Status {
    match level {
        Level::Must => Status::Fail,
        Level::Should => Status::Warn,
    }
}

#[cfg(test)]
mod tests {
    use kaged_host_core::audit::AuditEvent;
    use serde_json::json;

    use super::*;
    use crate::catalogue::{
        HOOKS_ANSWERS, METHODS_ANSWERS, METHODS_TOOL_VALID_ARGS, TIMING_MARGINS,
    };
    use crate::report::EndedBy;

    fn baseline(lines: &str) -> Baseline {
        Baseline::parse(lines, "known-failing.txt")
    }

    fn diagnosis() -> CageDiagnosis {
        CageDiagnosis {
            text: "the cage explains it: /data is read-only".into(),
            grant: "write:fs:/data".into(),
        }
    }

    #[test]
    fn a_broken_should_rule_warns_and_a_must_rule_fails() {
        let must = finalize(
            &METHODS_ANSWERS,
            "m".into(),
            Verdict::fail("x"),
            &Evidence::default(),
            None,
        );
        assert_eq!(must.result.status, Status::Fail);
        assert_eq!(must.result.kind, Some(Kind::WrongAnswer));
        let should = finalize(
            &TIMING_MARGINS,
            "t".into(),
            Verdict::fail("x"),
            &Evidence::default(),
            None,
        );
        assert_eq!(should.result.status, Status::Warn);
        assert_eq!(should.result.kind, Some(Kind::Slow));
    }

    #[test]
    fn the_baseline_makes_a_listed_failure_known_and_an_exact_pass_stale() {
        let b = baseline("methods.answers[x]\nhooks.*\n");
        let known = finalize(
            &METHODS_ANSWERS,
            "methods.answers[x]".into(),
            Verdict::fail("broke"),
            &Evidence::default(),
            Some(&b),
        );
        assert_eq!(known.result.status, Status::Warn);
        assert_eq!(
            known.result.known_failure.as_deref(),
            Some("known-failing.txt")
        );
        assert!(known
            .result
            .detail
            .starts_with("known failure (listed in known-failing.txt): broke"));
        let stale = finalize(
            &METHODS_ANSWERS,
            "methods.answers[x]".into(),
            Verdict::pass("ok"),
            &Evidence::default(),
            Some(&b),
        );
        assert_eq!(stale.result.kind, Some(Kind::StaleBaseline));
        let star = finalize(
            &HOOKS_ANSWERS,
            "hooks.answers[on_message]".into(),
            Verdict::pass("ok"),
            &Evidence::default(),
            Some(&b),
        );
        assert_eq!(star.result.status, Status::Pass);
    }

    #[test]
    fn a_pass_on_an_error_the_cage_caused_fails_and_names_the_grant() {
        let evidence = Evidence {
            cage_in_answers: Some(diagnosis()),
            cage_in_output: Some(diagnosis()),
            ..Evidence::default()
        };
        let f = finalize(
            &METHODS_TOOL_VALID_ARGS,
            "v".into(),
            Verdict::pass("a domain error"),
            &evidence,
            None,
        );
        assert_eq!(f.result.status, Status::Fail);
        assert_eq!(f.result.kind, Some(Kind::CageDenied));
        assert!(
            f.result.detail.contains("the cage explains it"),
            "{}",
            f.result.detail
        );
        assert_eq!(f.root, Some(RootKey::Grant("write:fs:/data".into())));
    }

    #[test]
    fn a_storage_denial_names_the_missing_capability_as_the_root() {
        let denial = AuditRecord {
            ts: std::time::SystemTime::UNIX_EPOCH,
            event: AuditEvent::StorageDenied,
            plugin: "p".into(),
            data: json!({"name": "p", "capability": "storage:sqlite"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        };
        let evidence = Evidence {
            events: vec![denial],
            ..Evidence::default()
        };
        let f = finalize(
            &METHODS_ANSWERS,
            "m".into(),
            Verdict::fail("x"),
            &evidence,
            None,
        );
        assert_eq!(f.result.kind, Some(Kind::CapabilityNotDeclared));
        assert_eq!(f.root, Some(RootKey::Capability("storage:sqlite".into())));
        assert_eq!(f.result.ended_by, Some(EndedBy::NoWait));
    }

    #[test]
    fn the_rule_quoted_is_the_one_the_failure_kind_breaks() {
        let hook = finalize(
            &HOOKS_ANSWERS,
            "h".into(),
            Verdict::fail("x"),
            &Evidence::default(),
            None,
        );
        assert!(
            hook.result.sentence.starts_with("ADDENDUM §5"),
            "{}",
            hook.result.sentence
        );
        let noise = finalize(
            &METHODS_ANSWERS,
            "m".into(),
            Verdict::fail_as(Kind::StdoutNoise, "x"),
            &Evidence::default(),
            None,
        );
        assert!(noise.result.sentence.contains("Stdout discipline"));
        let own = finalize(
            &METHODS_ANSWERS,
            "m".into(),
            Verdict::fail("x"),
            &Evidence::default(),
            None,
        );
        assert_eq!(own.result.sentence, METHODS_ANSWERS.sentence);
        let pass = finalize(
            &HOOKS_ANSWERS,
            "h".into(),
            Verdict::pass("ok"),
            &Evidence::default(),
            None,
        );
        assert_eq!(pass.result.sentence, HOOKS_ANSWERS.sentence);
    }
}
