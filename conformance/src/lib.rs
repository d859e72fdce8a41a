//! # kaged-conformance
//!
//! Runs `kaged-host-sim` against any plugin binary, in any language, and
//! reports per-case verdicts for humans and CI (JSON, JUnit, TAP). The
//! command line and JSON report follow ADDENDUM §11.
//!
//! The library entry is [`run_suite`] (or [`runner::run_suite_streaming`]
//! to see each case as it finishes).

pub mod catalogue;
pub mod cli;
pub mod cli_error;
pub mod fuzz;
pub mod fuzz_cli;
pub mod list;
pub mod pack;
pub mod profile;
pub mod report;
pub mod report_format;
pub mod runner;
pub mod schema_args;
pub mod selection;
pub mod testing;

pub use runner::{run_suite, Options, SuiteError};

/// The README's examples (the crate's page on crates.io), compiled as
/// doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
