//! Certifying a plugin from its own tests the way the daemon would run it:
//! pack the freshly built binary with the plugin directory's manifest
//! ([`crate::pack`]: the binary under `bin/`, `command: [./bin/NAME]`),
//! install the packed directory into a temporary plugin store (a copy, as
//! `plugin install` makes it), run the whole suite on the installed copy
//! caged (`--cage require`: a pass means it works in the daemon's cage),
//! and fail with the human report when any case fails or warns.
//!
//! ```no_run
//! // tests/conformance.rs of a plugin crate
//! let report = kaged_conformance::testing::assert_conforms(
//!     env!("CARGO_MANIFEST_DIR").as_ref(),
//!     "target/debug/my-plugin", // env!("CARGO_BIN_EXE_my-plugin")
//! );
//! assert_eq!(report.skipped_ids(), ["hooks.answers", "compaction.compactor_contract"]);
//! ```

use std::path::{Path, PathBuf};

use kaged_host_core::{CageKind, CageMode, TimeScale};
use kaged_plugin_protocol::manifest::MANIFEST_FILE;

use crate::pack::{install_packed, pack, PackInput};
use crate::report::{render_human, CaseResult, Report, Status};
use crate::{run_suite, Options};

/// The time scale of [`assert_conforms`]: a quarter of every spec timeout,
/// room enough for a correct plugin on a busy CI machine.
pub const TEST_TIME_SCALE: f64 = 0.25;

/// A plugin packed and installed into a temporary store, removed on drop.
#[derive(Debug)]
pub struct InstalledCopy {
    root: tempfile::TempDir,
    dir: PathBuf,
}

impl InstalledCopy {
    /// Pack `binary` with the manifest of the plugin directory `dir` and
    /// install the packed directory into a temporary plugin store.
    pub fn new(dir: &Path, binary: &Path) -> Result<InstalledCopy, crate::pack::PackError> {
        let manifest_path = dir.join(MANIFEST_FILE);
        let manifest = std::fs::read_to_string(&manifest_path).map_err(|source| {
            crate::pack::PackError::Io {
                path: manifest_path,
                source,
            }
        })?;
        let root = kaged_host_engine::scratch_store_dir(dir).map_err(|source| {
            crate::pack::PackError::Io {
                path: std::env::temp_dir(),
                source,
            }
        })?;
        let input = PackInput {
            manifest: &manifest,
            binary,
            source_dir: dir,
        };
        let packed = pack(&input, &root.path().join("packed"))?;
        let dir = install_packed(&packed.dir, &root.path().join("store"))?;
        Ok(InstalledCopy { root, dir })
    }

    /// The installed copy's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The temporary root (packed directory and store).
    pub fn root(&self) -> &Path {
        self.root.path()
    }
}

/// Run the suite against the plugin in `dir` with `binary` as its
/// executable, packed and installed the way the daemon installs plugins
/// ([`InstalledCopy`]; nothing is written into `dir`), caged
/// (`--cage require`), with `dir`'s conformance profile ([`profile_of`]);
/// panic with the human report unless no case failed or warned, and when
/// the plugin cannot be caged here (install bubblewrap).
pub fn assert_conforms(dir: &Path, binary: impl AsRef<Path>) -> Report {
    let installed = InstalledCopy::new(dir, binary.as_ref()).unwrap_or_else(|e| {
        panic!(
            "cannot pack and install the plugin in {}: {}",
            dir.display(),
            kaged_plugin_protocol::error_chain::chain(&e)
        )
    });
    let options = Options {
        time_scale: TimeScale::new(TEST_TIME_SCALE).expect("a valid time scale"),
        cage: CageMode::Require,
        profile: profile_of(dir),
        ..Options::default()
    };
    let report = run_suite(installed.dir(), &options)
        .unwrap_or_else(|e| panic!("the suite could not run against {}: {e}", dir.display()));
    assert_eq!(report.cage, Some(CageKind::Bwrap), "the suite ran caged");
    assert_eq!(
        report.summary.failed + report.summary.warned,
        0,
        "\n{}",
        render_human(&report, false, true)
    );
    assert_eq!(report.exit_code(true), 0);
    let self_contained = report.case(crate::catalogue::LAUNCH_SELF_CONTAINED.id);
    assert_eq!(
        self_contained.status,
        Status::Pass,
        "{}",
        self_contained.detail
    );
    report
}

/// The conformance profile of the plugin directory `dir`
/// (`kaged-conformance.yaml`), if it has one: packing leaves it out (the
/// daemon does not read it), so the suite is pointed at it
/// (`--conformance-profile`).
pub fn profile_of(dir: &Path) -> Option<PathBuf> {
    Some(dir.join(crate::profile::PROFILE_FILE)).filter(|p| p.is_file())
}

impl Report {
    /// The ids of the skipped cases, in run order.
    pub fn skipped_ids(&self) -> Vec<&str> {
        self.cases
            .iter()
            .filter(|c| c.status == Status::Skip)
            .map(|c| c.id.as_str())
            .collect()
    }

    /// The case `id`; panics naming it, with the whole report, when the
    /// suite ran no such case.
    pub fn case(&self, id: &str) -> &CaseResult {
        self.cases
            .iter()
            .find(|c| c.id == id)
            .unwrap_or_else(|| panic!("no case {id} in\n{}", render_human(self, false, true)))
    }
}
