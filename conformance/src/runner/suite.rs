//! The suite: runs the table's cases ([`super::cases::CHECKS`]) stage by
//! stage against one plugin directory and produces a [`Report`]. Cases run
//! one after another, so that the audit events of each case are exactly
//! those emitted while it ran.
//!
//! The stages: the manifest is validated (`manifest.*`); unless it is
//! usable every case left is skipped; the run context is built and the
//! context cases run (`launch.command_exists`); the primary spawn starts
//! and the cases that need it or a session run; every session ends and
//! the whole-run observations are judged.

use std::path::Path;
use std::sync::Arc;

use kaged_host_core::audit::AuditLog;
use kaged_host_core::validate::{validate_dir, ValidationReport};
use kaged_host_core::CageKind;
use kaged_host_core::InFlight;
use kaged_host_storage::BrokerHandler;
use kaged_host_storage::StorageBroker;

use super::cage::{ConfigRoot, RunCage};
use super::cases::{usable, CHECKS};
use super::check::{CaseFn, Check, Stage, Target};
use super::context::RunContext;
use super::error::SuiteError;
use super::observations::Observations;
use super::options::Options;
use super::plan::{plan, Planned};
use super::primary::{self, Primary, NOT_STARTED};
use super::recorder::Recorder;
use super::sessions::Sessions;
use super::stored::{self, StoredRun};
use super::verdict::Verdict;
use crate::report::{CaseResult, EffectiveTimeouts, PluginInfo, Report};

/// Why every case after `manifest.*` is skipped when the manifest is not
/// usable.
pub(crate) const INVALID_MANIFEST: &str =
    "the manifest is invalid: the host refuses to launch the plugin (see manifest.valid)";

/// Run every selected case against the plugin in `dir`.
pub fn run_suite(dir: &Path, options: &Options) -> Result<Report, SuiteError> {
    run_suite_streaming(dir, options, &mut |_| {})
}

/// [`run_suite`], calling `on_case` as each case finishes (for streamed
/// human output).
pub fn run_suite_streaming(
    dir: &Path,
    options: &Options,
    on_case: &mut dyn FnMut(&CaseResult),
) -> Result<Report, SuiteError> {
    check_dirs(dir, options)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(SuiteError::Runtime)?;
    rt.block_on(run_checked(dir, options, on_case))
}

/// [`run_suite_streaming`] inside an existing Tokio runtime.
pub async fn run_suite_async(
    dir: &Path,
    options: &Options,
    on_case: &mut dyn FnMut(&CaseResult),
) -> Result<Report, SuiteError> {
    check_dirs(dir, options)?;
    run_checked(dir, options, on_case).await
}

fn check_dirs(dir: &Path, options: &Options) -> Result<(), SuiteError> {
    if !dir.exists() {
        return Err(SuiteError::NoSuchDir(dir.to_path_buf()));
    }
    if !dir.is_dir() {
        return Err(SuiteError::NotADir(dir.to_path_buf()));
    }
    if let Some(t) = &options.transcript_dir {
        std::fs::create_dir_all(t).map_err(|source| SuiteError::TranscriptDir {
            dir: t.clone(),
            source,
        })?;
    }
    Ok(())
}

async fn run_checked(
    dir: &Path,
    options: &Options,
    on_case: &mut dyn FnMut(&CaseResult),
) -> Result<Report, SuiteError> {
    let broker = match &options.storage_db {
        Some(p) => StorageBroker::open(p),
        None => StorageBroker::open_temp(),
    }
    .map_err(|source| SuiteError::StorageDb {
        path: options.storage_db.clone(),
        source,
    })?;
    let storage = InFlight::new(Arc::new(BrokerHandler::new(broker)));
    let (kind, reason) = RunCage::kind(options.cage).await?;
    let config_root = ConfigRoot::for_run(options)?;
    let audit = AuditLog::memory();
    let mut rec = Recorder::new(options, dir, audit.clone(), on_case);
    let validation = validate_dir(dir);
    for check in rows(Stage::Validated) {
        if let CaseFn::Manifest(f) = check.run {
            rec.record(check.case, check.case.id.to_string(), f(&validation));
        }
    }
    let (cage, observations) = match usable(&validation) {
        Some(m) => {
            let cage = RunCage::compile(kind, reason, m, dir, &config_root.path);
            if cage.kind == CageKind::Bwrap {
                rec.diagnose_with(cage.policy.clone(), &config_root.path);
            }
            let run = (cage.clone(), config_root.path.clone());
            let ctx = RunContext::new(
                dir,
                Arc::new(m.clone()),
                options,
                audit.clone(),
                storage,
                run,
            );
            let observations = run_usable(&ctx, &mut rec).await;
            (cage, Some(observations))
        }
        None => {
            rec.skip_rest(INVALID_MANIFEST, &crate::catalogue::MANIFEST_VALID);
            let cage = RunCage {
                kind,
                reason,
                policy: None,
                compile_error: None,
            };
            (cage, None)
        }
    };
    let report = report(dir, options, &validation, rec);
    let report = report.with_cage(cage.kind, cage.reason.clone(), cage.summary());
    if let Some(t) = &options.transcript_dir {
        store(t, &report, observations.as_ref(), &audit)?;
    }
    Ok(report)
}

/// Leave the stored run (`runner::stored`) next to the case transcripts.
fn store(
    dir: &Path,
    report: &Report,
    observations: Option<&Observations>,
    audit: &AuditLog,
) -> Result<(), SuiteError> {
    let run = StoredRun {
        format: stored::FORMAT,
        tool: concat!("kaged-conformance ", env!("CARGO_PKG_VERSION")).to_string(),
        plugin: report.plugin.clone(),
        time_scale: report.time_scale,
        timeouts: report.timeouts.unwrap_or_else(|| {
            EffectiveTimeouts::from_timeouts(&kaged_host_core::Timeouts::defaults(
                kaged_host_core::TimeScale::FULL,
            ))
        }),
        cage: report.cage.unwrap_or(CageKind::Off),
        cage_reason: report.cage_reason.clone(),
        cage_policy: report.cage_policy.clone(),
        manifest: observations.map(|o| o.manifest.to_yaml()),
    };
    let wire = observations.map_or(&[][..], Observations::wire);
    stored::write(dir, &run, &audit.events(), wire).map_err(SuiteError::Stored)
}

/// The stages after a usable manifest; what the whole run showed.
async fn run_usable(ctx: &RunContext, rec: &mut Recorder<'_>) -> Observations {
    let mut sessions = Sessions::new();
    let none = Inputs::default();
    run_stage(Stage::Usable, ctx, &mut sessions, &none, rec).await;
    let primary = primary::start(ctx, &mut sessions).await;
    let started = Inputs {
        primary: primary.as_ref(),
        observations: None,
    };
    run_stage(Stage::Started, ctx, &mut sessions, &started, rec).await;
    let observations = Observations::after_run(ctx, &mut sessions).await;
    let ended = Inputs {
        primary: primary.as_ref(),
        observations: Some(&observations),
    };
    run_stage(Stage::Ended, ctx, &mut sessions, &ended, rec).await;
    observations
}

/// What a stage's cases read besides the context and the sessions.
#[derive(Default)]
struct Inputs<'a> {
    primary: Option<&'a Primary>,
    observations: Option<&'a Observations>,
}

/// The table's rows of `stage` (contiguous: the table is in stage order).
pub(crate) fn rows(stage: Stage) -> &'static [Check] {
    let start = CHECKS.partition_point(|c| c.run.stage() < stage);
    let end = CHECKS.partition_point(|c| c.run.stage() <= stage);
    &CHECKS[start..end]
}

async fn run_stage(
    stage: Stage,
    ctx: &RunContext,
    sessions: &mut Sessions,
    inputs: &Inputs<'_>,
    rec: &mut Recorder<'_>,
) {
    for planned in plan(rows(stage), &ctx.manifest) {
        match planned {
            Planned::NoTarget(check, why) => {
                rec.record(check.case, check.case.id.to_string(), Verdict::skip(why));
            }
            Planned::Run(check, target) => {
                run_case(check, &target, ctx, sessions, inputs, rec).await;
            }
        }
    }
}

/// Run one case: begin it, give its function what it reads, attach what
/// it reports, end it.
async fn run_case(
    check: &'static Check,
    target: &Target,
    ctx: &RunContext,
    sessions: &mut Sessions,
    inputs: &Inputs<'_>,
    rec: &mut Recorder<'_>,
) {
    let case = check.case;
    let id = target.case_id(case);
    match check.run {
        // Judged before the context exists (see `run_checked`).
        CaseFn::Manifest(_) => {}
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
        CaseFn::Session(f) => {
            if let Some(mut scope) = rec.begin(case, id) {
                sessions.touch_shared(&mut scope);
                let v = f(ctx, sessions, &mut scope, target).await;
                rec.end(scope, v);
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

/// The report of the run.
fn report(
    dir: &Path,
    options: &Options,
    validation: &ValidationReport,
    rec: Recorder<'_>,
) -> Report {
    let m = validation.manifest.as_ref();
    let plugin = PluginInfo {
        name: m.map_or_else(
            || {
                dir.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            },
            |m| m.name.clone(),
        ),
        version: m.map(|m| m.version.clone()).unwrap_or_default(),
        dir: dir.display().to_string(),
    };
    let timeouts = options.timeouts(m);
    Report::new(plugin, options.time_scale.factor(), rec.into_results())
        .with_timeouts(EffectiveTimeouts::from_timeouts(&timeouts))
}
