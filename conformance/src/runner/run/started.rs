//! The `Started` stage: the primary spawn's cases (judged from its start
//! and handshake) and the session cases, these run in lanes
//! (`runner::run::lanes`), at most `--jobs` at once, each result recorded in
//! table order whatever order the lanes finish in.

use std::sync::Arc;

use futures_util::stream::{FuturesUnordered, StreamExt};
use futures_util::FutureExt;
use tokio::sync::Semaphore;

use super::direct::{rows, run_case, Inputs};
use super::lanes::{run_lane, split, LaneCase, LaneRun, LaneShared, RunStorage};
use crate::catalogue::Kind;
use crate::runner::judge::recorder::Recorder;
use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::{CaseFn, Check, Stage, Target};
use crate::runner::plan::expand::{plan, Planned};
use crate::runner::session::barrier::{Barrier, Shutdown};
use crate::runner::session::context::RunContext;
use crate::runner::session::processes::LaneProcesses;

/// A finished lane's results, each taken when it is recorded.
type Outcomes = Vec<Option<(Scope, Verdict)>>;

/// Where a `Started` case is recorded from.
enum Slot {
    /// Judged from the primary spawn (`Launch`, `Handshake`).
    Direct(&'static Check, Target),
    /// No target: skipped with the reason.
    NoTarget(&'static Check, &'static str),
    /// Deselected.
    Deselected(&'static Check, String),
    /// Run in a lane: the index into the lane cases.
    Lane(usize),
}

/// The `Started` stage: the primary spawn's cases and the session cases,
/// these in lanes (`runner::run::lanes`), each result recorded in table order;
/// every lane's events and transcripts, in lane order.
pub(crate) async fn run_started(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    inputs: &Inputs<'_>,
    rec: &mut Recorder<'_>,
    storage: &RunStorage,
) -> Vec<LaneRun> {
    let mut slots = Vec::new();
    let mut cases = Vec::new();
    for planned in plan(rows(Stage::Started), &ctx.manifest) {
        match planned {
            Planned::NoTarget(check, why) => slots.push(Slot::NoTarget(check, why)),
            Planned::Run(check, target) if matches!(check.run, CaseFn::Session(_)) => {
                let id = target.case_id(check.case);
                if ctx.options.selection.excluded(&id).is_some() {
                    slots.push(Slot::Deselected(check, id));
                } else {
                    slots.push(Slot::Lane(cases.len()));
                    cases.push(LaneCase { check, target, id });
                }
            }
            Planned::Run(check, target) => slots.push(Slot::Direct(check, target)),
        }
    }
    let (lanes, at) = split(&cases);
    // With --max-failures, lanes run one at a time, in table order, so that
    // which cases run never depends on timing.
    let sequential = ctx.options.max_failures.is_some();
    let barrier = Barrier::new();
    if !cases.iter().any(|c| c.check.is_barrier()) {
        barrier.set(Shutdown::Unjudged);
    }
    let shared = LaneShared {
        ctx,
        mode: processes.mode().clone(),
        barrier,
        jobs: Arc::new(Semaphore::new(if sequential {
            1
        } else {
            ctx.options.jobs()
        })),
        storage,
    };
    // The primary spawn's session goes to the first lane (the barrier's).
    let mut primary = processes.take_shared();
    let mut outcomes: Vec<Option<Outcomes>> = lanes.iter().map(|_| None).collect();
    let mut refused = vec![false; lanes.len()];
    let mut runs = Vec::new();
    let mut running = FuturesUnordered::new();
    if !sequential {
        for (l, cases) in lanes.iter().enumerate() {
            let p = if l == 0 { primary.take() } else { None };
            let shared = &shared;
            running.push(async move { (l, run_lane(shared, cases, p).await) }.boxed_local());
        }
    } else if lanes.first().is_some_and(|l| l[0].check.is_barrier()) {
        let run = run_lane(&shared, &lanes[0], primary.take()).await;
        keep(0, run, &mut outcomes, &mut runs);
    }
    for slot in slots {
        match slot {
            Slot::Direct(check, target) => run_case(check, &target, ctx, inputs, rec),
            Slot::NoTarget(check, why) => {
                rec.record(check.case, check.case.id.to_string(), Verdict::skip(why));
            }
            Slot::Deselected(check, id) => {
                rec.record(
                    check.case,
                    id,
                    Verdict::skip_as(Kind::Deselected, "deselected"),
                );
            }
            Slot::Lane(i) => {
                let (l, k) = at[i];
                if outcomes[l].is_none() && !refused[l] {
                    if sequential {
                        if rec.refusal(&lanes[l][0].id).is_some() {
                            refused[l] = true;
                        } else {
                            let p = if l == 0 { primary.take() } else { None };
                            let run = run_lane(&shared, &lanes[l], p).await;
                            keep(l, run, &mut outcomes, &mut runs);
                        }
                    } else {
                        while outcomes[l].is_none() {
                            let Some((j, run)) = running.next().await else {
                                break;
                            };
                            keep(j, run, &mut outcomes, &mut runs);
                        }
                    }
                }
                let case = &cases[i];
                match outcomes[l].as_mut().and_then(|o| o[k].take()) {
                    Some((scope, v)) => rec.end(scope, v),
                    None => rec.record(
                        case.check.case,
                        case.id.clone(),
                        Verdict::blocked("not run"),
                    ),
                }
            }
        }
    }
    while let Some((j, run)) = running.next().await {
        keep(j, run, &mut outcomes, &mut runs);
    }
    if let Some((s, _)) = primary {
        crate::runner::session::processes::retire(s).await;
    }
    runs.sort_by_key(|(l, _)| *l);
    runs.into_iter().map(|(_, run)| run).collect()
}

/// Keep a finished lane `l`: its results, to be recorded in table order,
/// and the rest (events, transcripts) for the whole-run observations.
fn keep(
    l: usize,
    mut run: LaneRun,
    outcomes: &mut [Option<Outcomes>],
    runs: &mut Vec<(usize, LaneRun)>,
) {
    outcomes[l] = Some(
        std::mem::take(&mut run.results)
            .into_iter()
            .map(Some)
            .collect(),
    );
    runs.push((l, run));
}
