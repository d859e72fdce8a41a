//! The fuzz run as a report: one case per [`Property`], in the formats of
//! `run` (the counterexample and its replay in the failing case's detail).
//! A property is `pass` only when operations exercised it and it held; one
//! no operation exercised is `skip` with the reason; `memory_bounded`
//! needs two RSS samples at least.

use crate::catalogue::Kind;
use crate::catalogue::Level;
use crate::report::{CaseResult, PluginInfo, Report, Status};

use super::{FuzzOutcome, Property, Slope};

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
                known_failure: None,
                kind: match status {
                    Status::Pass => None,
                    // No RSS to read is this machine's; a property no
                    // operation reached does not apply to the plugin.
                    Status::Skip if *p == Property::MemoryBounded => Some(Kind::Unavailable),
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
    .with_cage(
        outcome.cage,
        outcome.cage_reason.clone(),
        outcome.cage_policy.clone(),
    )
}

/// `fail` for a MUST, `warn` for a SHOULD.
fn failed(p: Property) -> Status {
    match p.level() {
        Level::Must => Status::Fail,
        Level::Should => Status::Warn,
    }
}

fn verdict(p: Property, o: &FuzzOutcome, replay: &str) -> (Status, String) {
    if let Some(f) = o.failure.as_ref().filter(|f| f.broken.property == p) {
        let steps: Vec<String> = f
            .ops
            .iter()
            .enumerate()
            .map(|(i, op)| format!("  {}. {}", i + 1, op.describe()))
            .collect();
        let stopped = f.shrink_cut_short.map_or_else(String::new, |cap| {
            format!(
                "\nshrinking stopped after {} run(s) at its wall-clock cap ({cap:?}, --shrink-budget), with runs left: this replay may not be minimal; a longer cap shrinks it as far as --shrink-runs allows, the same on any machine",
                f.shrink_runs
            )
        });
        return (
            failed(p),
            format!(
                "{} (sequence {} of seed {}, shrunk from {} to {} operation(s) in {} run(s); broken after operation {}):\n{}\nreplay: {replay}{stopped}",
                f.broken.detail,
                f.case,
                o.seed,
                f.original_len,
                f.ops.len(),
                f.shrink_runs,
                f.broken.step,
                steps.join("\n")
            ),
        );
    }
    if let Some((s, stop)) = o
        .slope
        .as_ref()
        .and_then(|s| Some((s, s.stopped.as_ref()?)))
        .filter(|(_, stop)| stop.property == p)
    {
        return (
            failed(p),
            format!(
                "the memory soak stopped at call {} of {} ({} answered) repeating {}: {}\nreproduce: {}",
                stop.call, s.requested, s.calls, s.op, stop.detail, s.bench
            ),
        );
    }
    if p == Property::MemoryBounded {
        return memory(o.slope.as_ref());
    }
    if let Some(why) = o.coverage.unexercised(p, o.cases) {
        return (Status::Skip, why);
    }
    let n = o.coverage.count(p);
    match &o.failure {
        Some(f) => (
            Status::Skip,
            format!(
                "held over the {n} operation(s) exercising it before sequence {} failed; not judged past it (the run stops at the first failure)",
                f.case
            ),
        ),
        None => (
            Status::Pass,
            format!(
                "held over {n} operation(s) exercising it, in {} sequence(s) of {} operation(s){}",
                o.cases,
                o.ops,
                match &o.slope {
                    Some(s) if s.stopped.is_none() => format!(" and a soak of {} call(s)", s.calls),
                    _ => String::new(),
                }
            ),
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

/// `fuzz.memory_bounded`: judged on two RSS samples at least.
fn memory(slope: Option<&Slope>) -> (Status, String) {
    let Some(s) = slope else {
        return (
            Status::Skip,
            "no soak ran (a sequence failed first, or --soak 0)".into(),
        );
    };
    let stopped = match &s.stopped {
        Some(stop) => format!(
            "; the soak stopped at call {} of {} ({})",
            stop.call,
            s.requested,
            stop.property.id()
        ),
        None => String::new(),
    };
    if !s.measured() {
        return (
            Status::Skip,
            format!(
                "fewer than two RSS samples ({} read over {} call(s) of {}): no slope to judge (the plugin's memory is read from /proc){stopped}",
                s.samples.len(),
                s.calls,
                s.op
            ),
        );
    }
    if !s.bounded() {
        return (
            failed(Property::MemoryBounded),
            format!(
                "RSS grew {:.0} KiB per 1000 calls of {} after a warm-up of {} call(s), over {} call(s) (calls, KiB: {:?}){stopped}\nreproduce: {}",
                s.kib_per_1k_calls, s.op, s.warmup, s.calls, s.samples, s.bench
            ),
        );
    }
    (
        Status::Pass,
        format!(
            "{:.0} KiB per 1000 calls of {} after a warm-up of {} call(s) (the first half), over {} call(s) ({} RSS samples){stopped}",
            s.kib_per_1k_calls,
            s.op,
            s.warmup,
            s.calls,
            s.samples.len()
        ),
    )
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
