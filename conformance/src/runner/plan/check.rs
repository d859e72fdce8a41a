//! [`Check`]: one row of the runner's table, a catalogue case paired with
//! the function that checks it. The function's kind ([`CaseFn`]) says
//! what it reads, and so the [`Stage`] of the run at which it runs; a case
//! run per method, tool or hook (its catalogue row's `per`) gets its [`Target`].

use futures_util::future::LocalBoxFuture;
use kaged_host_core::audit::AuditRecord;
use kaged_host_core::validate::ValidationReport;
use kaged_plugin_protocol::HookName;
use serde_json::Value;

use crate::catalogue::{CaseDef, Lane};
use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::session::context::RunContext;
use crate::runner::session::observations::Observations;
use crate::runner::session::primary::Primary;
use crate::runner::session::processes::LaneProcesses;

/// A case checked with sessions, for one target.
pub(crate) type SessionFn = for<'r> fn(
    &'r RunContext,
    &'r mut LaneProcesses,
    &'r mut Scope,
    &'r Target,
) -> LocalBoxFuture<'r, Verdict>;

/// A case's function, by what it reads.
#[derive(Clone, Copy)]
pub(crate) enum CaseFn {
    /// Judges the host's validation of the manifest.
    Manifest(fn(&ValidationReport) -> Verdict),
    /// Judges the run context (a manifest that validated).
    Context(fn(&RunContext) -> Verdict),
    /// Judges the primary spawn's start (its whole start is attached).
    Launch(fn(&RunContext, &Primary) -> Verdict),
    /// Judges the primary spawn's handshake (its exchange is attached).
    Handshake(fn(&RunContext, &Primary) -> Verdict),
    /// Checks with sessions (those it touches are attached).
    Session(SessionFn),
    /// Judges the whole run; returns the audit events that show it.
    Observed(fn(&Observations) -> (Verdict, Vec<AuditRecord>)),
}

/// The stages of a run, in order; each case runs in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Stage {
    /// The manifest was validated.
    Validated,
    /// The manifest validated without errors (else every case left is
    /// skipped).
    Usable,
    /// The primary spawn started and shook hands (or failed to).
    Started,
    /// Every session ended.
    Ended,
}

impl CaseFn {
    /// The stage at which a function of this kind runs.
    pub fn stage(&self) -> Stage {
        match self {
            CaseFn::Manifest(_) => Stage::Validated,
            CaseFn::Context(_) => Stage::Usable,
            CaseFn::Launch(_) | CaseFn::Handshake(_) | CaseFn::Session(_) => Stage::Started,
            CaseFn::Observed(_) => Stage::Ended,
        }
    }
}

/// What one run of a case is for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Target {
    /// The plugin as a whole.
    Plugin,
    /// A custom method declared in the manifest.
    Method(String),
    /// A tool.
    Tool(ToolTarget),
    /// A subscribed lifecycle hook.
    Hook(HookName),
}

/// A tool as the host calls it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolTarget {
    /// The method name the host calls (the prefixed tool name).
    pub method: String,
    /// The tool's own name.
    pub name: String,
    /// Its `parameters_schema`.
    pub schema: Value,
}

impl Check {
    /// Whether this is the barrier case (its lane is [`Lane::Barrier`]).
    pub fn is_barrier(&self) -> bool {
        self.case.lane == Lane::Barrier
    }
}

impl Target {
    /// The id of `case` run for this target: `id` or `id[name]`.
    pub fn case_id(&self, case: &CaseDef) -> String {
        match self {
            Target::Plugin => case.id.to_string(),
            Target::Method(m) => case.instance_id(m),
            Target::Tool(t) => case.instance_id(&t.method),
            Target::Hook(h) => case.instance_id(h.as_str()),
        }
    }
}

/// One row of the runner's table.
#[derive(Clone, Copy)]
pub(crate) struct Check {
    /// The catalogue case.
    pub case: &'static CaseDef,
    /// The function that checks it.
    pub run: CaseFn,
    /// The function's path, as written in the table (for the table's own
    /// test: no function is registered twice).
    #[cfg(test)]
    pub name: &'static str,
}
