//! Lanes: how the session cases of a run are split so that they can run
//! at the same time (`--jobs N`) with verdicts that never depend on N.
//!
//! Every session case runs in a lane of its own, on its own plugin
//! processes, with its own audit log and (unless `--storage-db` names one)
//! its own storage database; only the cases whose catalogue row names one
//! shared lane ([`Lane::Shared`]) share it, in table order. What a lane's cases see therefore does not depend
//! on what other lanes do, and their results are recorded in table order
//! whatever order the lanes finish in.
//!
//! The barrier case ([`Lane::Barrier`]: `lifecycle.shutdown_exits_zero`) runs
//! first, on the primary spawn's session; every other session waits for
//! its judgement before it ends (`runner::session::barrier`).
//!
//! `--jobs N` bounds the lanes that work at once. A lane whose plugin
//! processes sit idle (waiting on a budget: an answer that does not come)
//! gives its place up ([`IdleRelease`]), so a plugin that hangs everywhere
//! is judged in about one budget rather than one budget per case.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use kaged_host_core::audit::{AuditEvent, AuditLog, AuditRecord};
use kaged_host_core::probe::tree_usage;
use kaged_host_core::{InFlight, PluginHandle, PluginRequestHandler, Transcript};
use kaged_host_storage::{BrokerHandler, StorageBroker};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::catalogue::Lane;
use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::{CaseFn, Check, Target};
use crate::runner::session::barrier::{Barrier, Shutdown};
use crate::runner::session::context::RunContext;
use crate::runner::session::processes::{LaneProcesses, Mode};

/// How long a lane works before it may count as waiting.
const IDLE_AFTER: Duration = Duration::from_millis(200);
/// The interval over which a lane's processes are measured.
const IDLE_SAMPLE: Duration = Duration::from_millis(50);
/// At most this much CPU over [`IDLE_SAMPLE`] counts as idle.
const IDLE_CPU: Duration = Duration::from_millis(2);

/// One case run in a lane.
#[derive(Clone)]
pub(crate) struct LaneCase {
    /// The table row.
    pub check: &'static Check,
    /// What it runs for.
    pub target: Target,
    /// Its case id.
    pub id: String,
}

/// Split `cases` (in table order) into lanes, the barrier's first; returns
/// the lanes and, per case, its (lane, index in lane).
pub(crate) fn split(cases: &[LaneCase]) -> (Vec<Vec<LaneCase>>, Vec<(usize, usize)>) {
    let mut lanes: Vec<Vec<LaneCase>> = Vec::new();
    let mut shared: Vec<(&str, usize)> = Vec::new();
    let mut at = Vec::with_capacity(cases.len());
    let barrier_first = cases.iter().position(|c| c.check.is_barrier());
    if let Some(b) = barrier_first {
        lanes.push(vec![cases[b].clone()]);
    }
    for (i, c) in cases.iter().enumerate() {
        if Some(i) == barrier_first {
            at.push((0, 0));
            continue;
        }
        let lane = match c.check.case.lane {
            Lane::Shared(name) => match shared.iter().find(|(n, _)| *n == name) {
                Some((_, l)) => *l,
                None => {
                    lanes.push(Vec::new());
                    shared.push((name, lanes.len() - 1));
                    lanes.len() - 1
                }
            },
            Lane::Own | Lane::Barrier => {
                lanes.push(Vec::new());
                lanes.len() - 1
            }
        };
        at.push((lane, lanes[lane].len()));
        lanes[lane].push(c.clone());
    }
    (lanes, at)
}

/// What a lane leaves: each case's scope and verdict (lane order), and
/// the lane's audit events and transcripts.
pub(crate) struct LaneRun {
    /// Per case, its scope (events attached) and verdict.
    pub results: Vec<(Scope, Verdict)>,
    /// Every audit event of the lane.
    pub events: Vec<AuditRecord>,
    /// Every transcript of the lane.
    pub transcripts: Vec<Transcript>,
}

/// What every lane of a run shares.
pub(crate) struct LaneShared<'a> {
    /// The run's context.
    pub ctx: &'a RunContext,
    /// How sessions are had.
    pub mode: Mode,
    /// The run's shutdown barrier.
    pub barrier: Barrier,
    /// The `--jobs` bound.
    pub jobs: Arc<Semaphore>,
    /// Where each lane's storage requests go.
    pub storage: &'a RunStorage,
}

/// Where each lane's storage requests go.
pub(crate) enum RunStorage {
    /// `--storage-db`: one broker for every lane.
    Shared(Arc<dyn PluginRequestHandler>),
    /// A temporary database per lane (opened lazily).
    PerLane,
}

impl RunStorage {
    /// The storage handler of a new lane.
    fn handler(&self) -> Arc<dyn PluginRequestHandler> {
        match self {
            RunStorage::Shared(h) => h.clone(),
            RunStorage::PerLane => match StorageBroker::open_temp() {
                Ok(b) => Arc::new(BrokerHandler::new(b)),
                // The run's own temporary database opened; should a lane's
                // not, its storage calls are answered -32003 ("storage not
                // available"), which `storage.*` cases report.
                Err(_) => Arc::new(kaged_host_core::DefaultHandler),
            },
        }
    }
}

/// Run one lane: its cases one after another on its own sessions
/// (`primary`: the session the barrier lane starts with).
pub(crate) async fn run_lane(
    shared: &LaneShared<'_>,
    cases: &[LaneCase],
    primary: Option<(PluginHandle, Transcript)>,
) -> LaneRun {
    let permit: Rc<RefCell<Option<OwnedSemaphorePermit>>> =
        Rc::new(RefCell::new(shared.jobs.clone().acquire_owned().await.ok()));
    // The lane given the primary spawn audits to the run's log, where that
    // spawn's host writes; every other lane to its own.
    let audit = match primary {
        Some(_) => shared.ctx.audit.clone(),
        None => AuditLog::memory(),
    };
    let first = audit.len();
    let storage = InFlight::new(shared.storage.handler());
    // Every lane but the primary spawn's runs under a config root of its own.
    let (ctx, _lane_root) = shared
        .ctx
        .for_lane(audit.clone(), storage, primary.is_none());
    let mut processes =
        LaneProcesses::for_lane(shared.mode.clone(), primary, shared.barrier.clone());
    let work = async {
        let mut results = Vec::with_capacity(cases.len());
        for (i, c) in cases.iter().enumerate() {
            let mut scope = Scope::new(c.check.case, c.id.clone(), audit.len());
            processes.touch_shared(&mut scope);
            let CaseFn::Session(f) = c.check.run else {
                continue;
            };
            let mut v = f(&ctx, &mut processes, &mut scope, &c.target).await;
            scope.stop_clock();
            if c.check.is_barrier() {
                shared.barrier.set(judgement(&v));
            }
            if i + 1 == cases.len() {
                processes.close_shared().await;
            }
            if processes.has_pending() {
                // Waiting on the barrier: another lane may work meanwhile.
                permit.borrow_mut().take();
                processes.finish_pending().await;
            }
            for note in processes.take_notes() {
                v = v.with_note(&note);
            }
            scope.set_events(audit.since(scope.audit_mark));
            scope.freeze();
            results.push((scope, v));
        }
        let _ = ctx.in_flight.settle(ctx.timeouts.request).await;
        results
    };
    let results = IdleRelease {
        audit: &audit,
        permit: &permit,
    }
    .run(work)
    .await;
    LaneRun {
        results,
        events: audit.since(first),
        transcripts: processes.transcripts().to_vec(),
    }
}

/// What the barrier case's verdict says of the plugin's shutdown.
fn judgement(v: &Verdict) -> Shutdown {
    match v {
        Verdict::Pass(_) => Shutdown::Honoured,
        Verdict::Fail(_) => Shutdown::Ignored,
        Verdict::Skip(_) => Shutdown::Unjudged,
    }
}

/// Gives a lane's `--jobs` place up once its plugin processes sit idle
/// (waiting for an answer or an exit costs no CPU).
struct IdleRelease<'r> {
    audit: &'r AuditLog,
    permit: &'r Rc<RefCell<Option<OwnedSemaphorePermit>>>,
}

impl IdleRelease<'_> {
    async fn run<T>(self, work: impl std::future::Future<Output = T>) -> T {
        tokio::pin!(work);
        tokio::select! {
            biased;
            out = &mut work => out,
            () = self.until_idle() => {
                self.permit.borrow_mut().take();
                work.await
            }
        }
    }

    async fn until_idle(&self) {
        tokio::time::sleep(IDLE_AFTER).await;
        loop {
            let before = self.cpu();
            tokio::time::sleep(IDLE_SAMPLE).await;
            if self.cpu().saturating_sub(before) <= IDLE_CPU {
                return;
            }
        }
    }

    /// The time the lane's live process groups spent on a CPU or waiting
    /// for one ([`TreeUsage::busy`](kaged_host_core::probe::TreeUsage::busy)).
    fn cpu(&self) -> Duration {
        self.audit
            .of(AuditEvent::Spawned)
            .iter()
            .filter_map(|r| r.get("pid").as_u64())
            .filter_map(|pid| tree_usage(pid as u32))
            .map(|u| u.busy())
            .sum()
    }
}
