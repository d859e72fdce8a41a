//! The cases judged without a session of their own (the manifest's, the
//! context's, the primary spawn's start and handshake, the whole-run
//! observations): what they read ([`Inputs`]) and how one is recorded
//! ([`run_case`]).

use crate::runner::cases::CHECKS;
use crate::runner::judge::recorder::Recorder;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::{CaseFn, Check, Stage, Target};
use crate::runner::session::context::RunContext;
use crate::runner::session::observations::Observations;
use crate::runner::session::primary::{Primary, NOT_STARTED};

/// What a stage's cases read besides the context and the sessions.
#[derive(Default)]
pub(crate) struct Inputs<'a> {
    pub primary: Option<&'a Primary>,
    pub observations: Option<&'a Observations>,
}

/// The table's rows of `stage` (contiguous: the table is in stage order).
pub(crate) fn rows(stage: Stage) -> &'static [Check] {
    let start = CHECKS.partition_point(|c| c.run.stage() < stage);
    let end = CHECKS.partition_point(|c| c.run.stage() <= stage);
    &CHECKS[start..end]
}

/// Run one case judged without a session of its own: begin it, give its
/// function what it reads, attach what it reports, end it. (Session
/// cases run in lanes: `run_started`.)
pub(crate) fn run_case(
    check: &'static Check,
    target: &Target,
    ctx: &RunContext,
    inputs: &Inputs<'_>,
    rec: &mut Recorder<'_>,
) {
    let case = check.case;
    let id = target.case_id(case);
    match check.run {
        // Judged before the context exists (see `run_checked`).
        CaseFn::Manifest(_) => {}
        // Run in lanes (see `run_started`).
        CaseFn::Session(_) => {}
        CaseFn::Context(f) => rec.record(case, id, f(ctx)),
        CaseFn::Launch(f) => match inputs.primary {
            None => rec.record(case, id, Verdict::blocked(NOT_STARTED)),
            Some(p) => {
                if let Some(mut scope) = rec.begin(case, id) {
                    scope.start = p.started;
                    scope.attach_exchange(&p.transcript, p.launch_events.clone());
                    rec.end(scope, f(ctx, p));
                }
            }
        },
        // Not reported when the primary spawn was never made.
        CaseFn::Handshake(f) => {
            if let Some(p) = inputs.primary {
                if let Some(mut scope) = rec.begin(case, id) {
                    scope.attach_exchange(&p.transcript, p.events.clone());
                    rec.end(scope, f(ctx, p));
                }
            }
        }
        CaseFn::Observed(f) => {
            if let Some(o) = inputs.observations {
                if let Some(mut scope) = rec.begin(case, id) {
                    let (v, events) = f(o);
                    scope.attach_events(events);
                    rec.end(scope, v);
                }
            }
        }
    }
}
