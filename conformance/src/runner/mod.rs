//! The suite runner: drives `kaged-host-sim` against one plugin directory
//! and produces a [`Report`]. Cases run one after another, in catalogue
//! order (the whole-run observations last), so that the audit events of
//! each case are exactly those emitted while it ran.
//!
//! ```no_run
//! use kaged_conformance::runner::{run_suite, Options};
//! let report = run_suite("plugins/echo".as_ref(), &Options::default())?;
//! std::process::exit(report.exit_code(false));
//! # Ok::<(), kaged_conformance::runner::SuiteError>(())
//! ```

mod case;
mod context;
mod handshake;
mod hooks;
mod launch;
mod lifecycle;
mod manifest;
mod methods;
mod observe;
mod protocol;
mod sessions;
mod suite;

use std::path::{Path, PathBuf};

use std::sync::Arc;

use kaged_host_sim::{BrokerHandler, InFlight, StorageBroker, TimeScale};

use crate::report::{CaseResult, Report};
use crate::selection::{Baseline, Selection};

pub(crate) use case::Verdict;
pub(crate) use suite::Suite;

/// How the suite runs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Multiplies every spec timeout and interval (ADDENDUM §10).
    pub time_scale: TimeScale,
    /// `--only` / `--skip`.
    pub selection: Selection,
    /// `--known-failing`: cases expected to fail.
    pub baseline: Option<Baseline>,
    /// `--transcript-dir`: one wire transcript per case is written here.
    pub transcript_dir: Option<PathBuf>,
    /// `--storage-db`: the storage broker's database (created if needed);
    /// `None` for a temporary database removed after the run.
    pub storage_db: Option<PathBuf>,
}

/// Why the suite could not run at all (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The plugin directory does not exist.
    #[error("no such plugin directory: {}", .0.display())]
    NoSuchDir(PathBuf),
    /// The plugin path is not a directory.
    #[error("not a directory: {}", .0.display())]
    NotADir(PathBuf),
    /// The transcript directory cannot be created.
    #[error("cannot create the transcript directory {}", dir.display())]
    TranscriptDir {
        /// The directory.
        dir: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The storage broker's database cannot be opened.
    #[error("cannot open the storage database {}", path.as_ref().map_or_else(|| "(temporary)".to_string(), |p| p.display().to_string()))]
    StorageDb {
        /// The `--storage-db` path (`None`: the temporary database).
        path: Option<PathBuf>,
        /// The cause.
        #[source]
        source: kaged_host_sim::storage::BrokerError,
    },
    /// The async runtime could not start.
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
}

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
    let mut suite = Suite::new(dir, options, storage, on_case);
    suite.run().await;
    Ok(suite.into_report())
}
