//! The suite: runs the table's cases ([`super::cases::CHECKS`]) stage by
//! stage against one plugin directory and produces a [`Report`]. Session
//! cases run in lanes (`runner::run::lanes`), at most `--jobs` working at once,
//! each with its own audit log, so that the audit events of each case are
//! exactly those its own sessions emitted; results are recorded in table
//! order whatever order the lanes finish in.
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

use kaged_host_core::PluginRequestHandler;

use super::cases::usable;
use super::error::SuiteError;
use super::judge::recorder::Recorder;
use super::judge::verdict::Verdict;
use super::options::Options;
use super::plan::check::{CaseFn, Stage};
use super::plan::expand::{plan, Planned};
use super::run::direct::{rows, run_case, Inputs};
use super::run::lanes::RunStorage;
use super::run::started::run_started;
use super::session::cage::{ConfigRoot, RunCage};
use super::session::context::RunContext;
use super::session::observations::Observations;
use super::session::primary;
use super::session::processes::LaneProcesses;
use super::stored::{self, StoredRun};
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
    let run_handler: Arc<dyn PluginRequestHandler> = Arc::new(BrokerHandler::new(broker));
    let lane_storage = match options.storage_db {
        Some(_) => RunStorage::Shared(run_handler.clone()),
        None => RunStorage::PerLane,
    };
    let storage = InFlight::new(run_handler);
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
            let (observations, applied) = run_usable(&ctx, &mut rec, &lane_storage).await;
            // The report states the cage as the primary spawn got it (its
            // cgroup applied or not), not only as compiled.
            let mut cage = cage;
            cage.applied = applied.map(RunCage::as_reported);
            (cage, Some(observations))
        }
        None => {
            rec.skip_rest(INVALID_MANIFEST, &crate::catalogue::MANIFEST_VALID);
            let cage = RunCage {
                kind,
                reason,
                policy: None,
                compile_error: None,
                applied: None,
            };
            (cage, None)
        }
    };
    let report = report(dir, options, &validation, rec);
    let report = report.with_cage(cage.kind, cage.reason.clone(), cage.summary());
    if let Some(t) = &options.transcript_dir {
        store(t, &report, observations.as_ref())?;
    }
    Ok(report)
}

/// Leave the stored run (`runner::stored`) next to the case transcripts.
fn store(
    dir: &Path,
    report: &Report,
    observations: Option<&Observations>,
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
    let events = observations.map_or(&[][..], Observations::events);
    stored::write(dir, &run, events, wire).map_err(SuiteError::Stored)
}

/// The stages after a usable manifest; what the whole run showed.
async fn run_usable(
    ctx: &RunContext,
    rec: &mut Recorder<'_>,
    storage: &RunStorage,
) -> (Observations, Option<kaged_host_core::cage::CageSummary>) {
    let mut processes = LaneProcesses::new();
    let none = Inputs::default();
    run_stage(Stage::Usable, ctx, &mut processes, &none, rec).await;
    let primary = primary::start(ctx, &mut processes).await;
    let started = Inputs {
        primary: primary.as_ref(),
        observations: None,
    };
    let lanes = run_started(ctx, &mut processes, &started, rec, storage).await;
    let _ = ctx.in_flight.settle(ctx.timeouts.request).await;
    let mut events = ctx.audit.events();
    let mut wire: Vec<_> = processes
        .transcripts()
        .iter()
        .flat_map(|t| t.records())
        .collect();
    for lane in lanes {
        events.extend(lane.events);
        wire.extend(lane.transcripts.iter().flat_map(|t| t.records()));
    }
    let observations = Observations::gathered(ctx, events, wire);
    let ended = Inputs {
        primary: primary.as_ref(),
        observations: Some(&observations),
    };
    run_stage(Stage::Ended, ctx, &mut processes, &ended, rec).await;
    let applied = primary.as_ref().and_then(|p| p.applied_cage.clone());
    (observations, applied)
}

async fn run_stage(
    stage: Stage,
    ctx: &RunContext,
    _sessions: &mut LaneProcesses,
    inputs: &Inputs<'_>,
    rec: &mut Recorder<'_>,
) {
    for planned in plan(rows(stage), &ctx.manifest) {
        match planned {
            Planned::NoTarget(check, why) => {
                rec.record(check.case, check.case.id.to_string(), Verdict::skip(why));
            }
            Planned::Run(check, target) => run_case(check, &target, ctx, inputs, rec),
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
