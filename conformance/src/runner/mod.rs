//! The suite runner: drives `kaged-host-sim` against one plugin directory
//! and produces a [`Report`](crate::report::Report).
//!
//! ```no_run
//! use kaged_conformance::runner::{run_suite, Options};
//! let report = run_suite("plugins/echo".as_ref(), &Options::default())?;
//! std::process::exit(report.exit_code(false));
//! # Ok::<(), kaged_conformance::runner::SuiteError>(())
//! ```
//!
//! A case is one row of the catalogue (`crate::catalogue`: its rule, level,
//! what it runs for, its failure kind, its lane, whether it gates the
//! start), one row of [`cases`]' table pairing it with the function that
//! checks it, and one fixture that proves it can fail
//! (`tests/fail_proofs.rs`). The runner's folders are its stages, and
//! depend on each other one way, top to bottom
//! (`scripts/module-layers.py conformance/src/runner` checks it):
//!
//! <!-- layers: suite offline > run > cases > plan > session > judge > error stored > options -->
//!
//! - `suite` (the stages of a run) and `offline` (a stored run judged
//!   again, through the same table);
//! - `run`: the planned rows carried out (direct cases, lanes, the
//!   `Started` stage);
//! - `cases`: the table and the functions, by area;
//! - `plan`: a table row and a stage's rows expanded per target;
//! - `session`: how the suite plays the daemon for a case (context, cage,
//!   sessions, the primary spawn, probes, the whole run's observations);
//! - `judge`: a verdict made a result (`finalize`, a pure step), the
//!   evidence a case keeps, the recorder, root causes;
//! - `error`, `stored` (what `--transcript-dir` keeps of a run) and
//!   `options`: plain definitions.

mod cases;
mod error;
mod judge;
mod offline;
mod options;
mod plan;
mod run;
mod session;
pub mod stored;
mod suite;

pub use error::SuiteError;
pub use offline::{judge_dir, judged_offline, NEEDS_THE_PLUGIN};
pub use options::Options;
pub use suite::{run_suite, run_suite_async, run_suite_streaming};

/// How a run's spawns are caged, for `fuzz`'s report too.
#[cfg(feature = "fuzz")]
pub(crate) use session::cage::RunCage;
