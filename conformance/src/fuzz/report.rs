//! The fuzz run as a report: one case per [`Property`], in the formats of
//! `run` (the counterexample and its replay in the failing case's detail).

use crate::report::{CaseResult, Kind, PluginInfo, Report, Status};

use super::{FuzzOutcome, Property};

/// The report of `outcome` for the plugin in `dir`; `replay` is the
/// one-line command that replays a failure.
pub fn fuzz_report(outcome: &FuzzOutcome, dir: &str, time_scale: f64, replay: &str) -> Report {
    let ms = outcome.elapsed.as_millis() as u64;
    let cases = Property::ALL
        .iter()
        .map(|p| {
            let (status, detail) = verdict(*p, outcome, replay);
            CaseResult {
                id: p.id().to_string(),
                title: p.title().to_string(),
                level: p.level(),
                spec: p.spec().to_string(),
                status,
                duration_ms: ms,
                detail,
                audit_events: Vec::new(),
                kind: match status {
                    Status::Pass => None,
                    Status::Skip => Some(Kind::NotApplicable),
                    Status::Fail | Status::Warn => Some(failure_kind(*p)),
                },
                caused_by: None,
                ended_by: None,
                sentence: String::new(),
                transcript_tail: Vec::new(),
            }
        })
        .collect();
    Report::new(
        PluginInfo {
            name: outcome.plugin.0.clone(),
            version: outcome.plugin.1.clone(),
            dir: dir.to_string(),
        },
        time_scale,
        cases,
    )
}

fn verdict(p: Property, o: &FuzzOutcome, replay: &str) -> (Status, String) {
    let fail = match p.level() {
        crate::catalogue::Level::Must => Status::Fail,
        crate::catalogue::Level::Should => Status::Warn,
    };
    if let Some(f) = o.failure.as_ref().filter(|f| f.broken.property == p) {
        let steps: Vec<String> = f
            .ops
            .iter()
            .enumerate()
            .map(|(i, op)| format!("  {}. {}", i + 1, op.describe()))
            .collect();
        return (
            fail,
            format!(
                "{} (sequence {} of seed {}, shrunk from {} to {} operation(s); broken after operation {}):\n{}\nreplay: {replay}",
                f.broken.detail,
                f.case,
                o.seed,
                f.original_len,
                f.ops.len(),
                f.broken.step,
                steps.join("\n")
            ),
        );
    }
    if p == Property::MemoryBounded {
        return match &o.slope {
            Some(s) if !s.bounded() => (
                fail,
                format!(
                    "RSS grew {:.0} KiB per 1000 calls of {} (calls, KiB: {:?})\nreproduce: {}",
                    s.kib_per_1k_calls, s.op, s.samples, s.bench
                ),
            ),
            Some(s) => (
                Status::Pass,
                format!(
                    "{:.0} KiB per 1000 calls of {} over {} calls",
                    s.kib_per_1k_calls, s.op, s.calls
                ),
            ),
            None => (
                Status::Skip,
                "no soak ran (a sequence failed first, or --soak 0)".into(),
            ),
        };
    }
    match &o.failure {
        Some(f) => (
            Status::Skip,
            format!(
                "not judged past sequence {} (the run stopped at the first failure)",
                f.case
            ),
        ),
        None => (
            Status::Pass,
            format!("held over {} sequence(s), {} operation(s)", o.cases, o.ops),
        ),
    }
}

/// The failure kind of a property that did not hold.
fn failure_kind(p: Property) -> Kind {
    match p {
        Property::NoCrash => Kind::Crashed,
        Property::AnswersInTime => Kind::Timeout,
        Property::CleanWire => Kind::ProtocolViolation,
        Property::MemoryBounded => Kind::MemoryGrowth,
        Property::InvalidArgsRejected
        | Property::ValidArgsAccepted
        | Property::InvalidConfigRejected
        | Property::ValidConfigAccepted
        | Property::HookAnswers
        | Property::CompactorContract => Kind::WrongAnswer,
    }
}
