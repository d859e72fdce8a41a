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
//! Its files depend on each other one way, bottom to top:
//!
//! - `options`, `error`, `verdict`, `call_context`: plain definitions;
//! - `cage` (how the run's spawns are caged), `diagnosis` (a failure the
//!   cage explains, named from the plugin's stderr);
//! - `context` (`RunContext`, read-only, passed by
//!   `&`), `scope` (one case's attachments), `recorder` (collects the
//!   verdicts);
//! - `sessions` (how a case gets a plugin session, passed explicitly),
//!   `primary` (the first spawn and its handshake), `observations` (the
//!   whole run, seen from its end);
//! - `check` (a row of the table: a case and the function that checks it);
//! - `direct` (the cases judged without a session of their own);
//! - `cases/*` (the functions, by area) and `cases/mod.rs` (the table);
//! - `barrier` (the shutdown judgement every session waits for before it
//!   ends), `lanes` (session cases split to run at once, `--jobs`);
//! - `plan` (a stage's rows expanded per target), then `started` (the
//!   stage of sessions, in lanes) and `suite` (the stages);
//! - `stored` (what `--transcript-dir` keeps of a run) and `judge` (a
//!   stored run judged again offline, through the same table).

mod barrier;
mod cage;
mod call_context;
mod cases;
mod check;
mod context;
mod diagnosis;
mod direct;
mod ended;
mod error;
mod judge;
mod kinds;
mod lanes;
mod observations;
mod options;
mod plan;
mod primary;
mod probe;
mod recorder;
mod roots;
mod scope;
mod sessions;
mod started;
pub mod stored;
mod suite;
mod verdict;

pub use error::SuiteError;
pub use judge::{judge_dir, judged_offline, NEEDS_THE_PLUGIN};
pub use options::Options;
pub use suite::{run_suite, run_suite_async, run_suite_streaming};
