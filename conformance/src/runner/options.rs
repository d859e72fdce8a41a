//! [`Options`]: how the suite runs (time scale, selection, baseline,
//! transcript directory, storage database, cage, config root).

use std::path::PathBuf;

use kaged_host_sim::time::TimeScale;
use kaged_host_sim::CageMode;

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
    /// `--cage`: every spawn of the run is caged (`auto`, the default, or
    /// `require`), or not (`off`).
    pub cage: CageMode,
    /// `--config-root`: the operator's config root that `config:/` grants
    /// resolve under; `None` for a temporary one removed after the run.
    pub config_root: Option<PathBuf>,
}
