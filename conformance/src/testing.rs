//! Certifying a plugin from its own tests: stage the freshly built binary
//! into a copy of the plugin directory, run the whole suite caged
//! (`--cage require`: a pass means it works in the daemon's cage), and
//! fail with the human report when any case fails or warns.
//!
//! ```no_run
//! // tests/conformance.rs of a plugin crate, where the binary is
//! // `env!("CARGO_BIN_EXE_my-plugin")`
//! let report = kaged_conformance::testing::assert_conforms(
//!     env!("CARGO_MANIFEST_DIR").as_ref(),
//!     "target/debug/my-plugin",
//! );
//! assert_eq!(report.skipped_ids(), ["hooks.answers", "compaction.compactor_contract"]);
//! ```

use std::path::Path;

use kaged_host_sim::testing::StagedPlugin;
use kaged_host_sim::{CageKind, CageMode, TimeScale};

use crate::report::{render_human, CaseResult, Report, Status};
use crate::{run_suite, Options};

/// The time scale of [`assert_conforms`]: a quarter of every spec timeout,
/// room enough for a correct plugin on a busy CI machine.
pub const TEST_TIME_SCALE: f64 = 0.25;

/// Run the suite against the plugin in `dir` with `binary` as its command
/// (staged in a temporary copy, so nothing is written into `dir`), caged
/// (`--cage require`); panic with the human report unless no case failed
/// or warned, and when the plugin cannot be caged here (install
/// bubblewrap).
pub fn assert_conforms(dir: &Path, binary: impl AsRef<Path>) -> Report {
    let staged = StagedPlugin::new(dir, binary)
        .unwrap_or_else(|e| panic!("cannot stage the plugin in {}: {e}", dir.display()));
    let options = Options {
        time_scale: TimeScale::new(TEST_TIME_SCALE).expect("a valid time scale"),
        cage: CageMode::Require,
        ..Options::default()
    };
    let report = run_suite(staged.dir(), &options)
        .unwrap_or_else(|e| panic!("the suite could not run against {}: {e}", dir.display()));
    assert_eq!(report.cage, Some(CageKind::Bwrap), "the suite ran caged");
    assert_eq!(
        report.summary.failed + report.summary.warned,
        0,
        "\n{}",
        render_human(&report, false, true)
    );
    assert_eq!(report.exit_code(true), 0);
    report
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
