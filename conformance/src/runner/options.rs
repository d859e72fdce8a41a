//! [`Options`]: how the suite runs (time scale, selection, baseline,
//! transcript directory, storage database, cage, config root, profile).

use std::path::PathBuf;

use kaged_host_core::normal::TranscriptForm;
use kaged_host_core::time::{TimeScale, Timeouts};
use kaged_host_core::CageMode;
use kaged_plugin_protocol::manifest::Manifest;

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
    /// `--transcript-form`: the case transcripts raw, or in the normal
    /// form (each case one step; `kaged_host_core::normal`).
    pub transcript_form: TranscriptForm,
    /// `--storage-db`: the storage broker's database (created if needed);
    /// `None` for a temporary database removed after the run.
    pub storage_db: Option<PathBuf>,
    /// Sets effective timeouts after scaling (the host's
    /// `HostConfig::adjust_timeouts`, and every wait of the suite); the
    /// suite's own tests keep process start and exit at their spec budgets
    /// with `Timeouts::with_spec_startup_and_exit`. `None`: each timeout is
    /// the spec value × `time_scale`.
    pub adjust_timeouts: Option<fn(Timeouts) -> Timeouts>,
    /// `--cage`: every spawn of the run is caged (`auto`, the default, or
    /// `require`), or not (`off`).
    pub cage: CageMode,
    /// `--config-root`: the operator's config root that `config:/` grants
    /// resolve under; `None` for a temporary one removed after the run.
    pub config_root: Option<PathBuf>,
    /// `--conformance-profile`: the conformance profile to read; `None` for
    /// `kaged-conformance.yaml` beside the manifest, if there is one.
    pub profile: Option<PathBuf>,
    /// `--max-failures N`: once N cases have failed, every case after them
    /// is reported `skip` (`not run: --max-failures N reached`) instead of
    /// run. `None`: every case runs.
    pub max_failures: Option<usize>,
    /// Run as if the plugin had no conformance profile beside its
    /// manifest (a certifier's policy with `plugin_profile: false`);
    /// `--conformance-profile` still names one.
    pub ignore_plugin_profile: bool,
    /// `--jobs N`: how many lanes of session cases work at once (`None`:
    /// the available parallelism). Verdicts never depend on it.
    pub jobs: Option<std::num::NonZeroUsize>,
}

impl Options {
    /// The `--jobs` bound: as given, else
    /// [`std::thread::available_parallelism`] (which respects CPU quotas).
    pub fn jobs(&self) -> usize {
        self.jobs
            .or_else(|| std::thread::available_parallelism().ok())
            .map_or(1, std::num::NonZeroUsize::get)
    }

    /// The effective timeouts for `manifest` (the spec defaults without
    /// one): scaled, then [`Options::adjust_timeouts`].
    pub fn timeouts(&self, manifest: Option<&Manifest>) -> Timeouts {
        let scaled = match manifest {
            Some(m) => Timeouts::for_manifest(m, self.time_scale),
            None => Timeouts::defaults(self.time_scale),
        };
        self.adjust_timeouts.map_or(scaled, |adjust| adjust(scaled))
    }
}
