//! [`Options`]: how the suite runs (time scale, selection, baseline,
//! transcript directory, storage database).

use std::path::PathBuf;

use kaged_host_sim::time::TimeScale;

use crate::selection::{Baseline, Selection};

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
