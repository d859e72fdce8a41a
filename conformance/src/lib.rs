//! # kaged-conformance
//!
//! Runs `kaged-host-sim` against any plugin binary, in any language, and
//! reports per-case verdicts for humans and CI (JSON, JUnit, TAP). The
//! command line and JSON report follow ADDENDUM §11.
//!
//! The library entry is [`run_suite`] (or [`runner::run_suite_streaming`]
//! to see each case as it finishes).
//!
//! Layers, top first (`scripts/module-layers.py` checks that every import
//! runs down): <!-- layers: cli > registry > fuzz_cli init > attest cli_error testing > fuzz list policy report_format runner > report > catalogue home pack printed profile schema_args selection valid_args -->
//!
//! A plugin's own tests depend on this crate with `default-features =
//! false`: the suite and [`testing::assert_conforms`] without the command
//! line (`cli`), the fuzzer (`fuzz`) or the JUnit writer (`junit`).

#[cfg(feature = "cli")]
pub mod attest;
pub mod catalogue;
#[cfg(feature = "cli")]
mod cli;
#[cfg(feature = "cli")]
mod cli_error;
#[cfg(feature = "fuzz")]
pub mod fuzz;
#[cfg(feature = "cli")]
mod fuzz_cli;
pub mod home;
#[cfg(feature = "cli")]
pub mod init;
pub mod list;
pub mod pack;
#[cfg(feature = "cli")]
pub mod policy;
mod printed;
pub mod profile;
#[cfg(feature = "cli")]
pub mod registry;
pub mod report;
#[cfg(feature = "cli")]
mod report_format;
pub mod runner;
mod schema_args;
pub mod selection;
pub mod testing;
pub mod valid_args;

pub use printed::{answers_flag, print_flag, PrintError};
pub use runner::{run_suite, Options, SuiteError};
pub use schema_args::{args_breaking_schema, args_from_schema, daemon_config};

// The command line, for the `kaged-conformance` binary and for tools that
// wrap the suite with the same flags (`cargo kaged test`).
#[cfg(feature = "cli")]
pub use cli::{main_with_args, run_dir, ReportArgs, SuiteArgs};
#[cfg(feature = "cli")]
pub use cli_error::CliError;
#[cfg(feature = "cli")]
pub use report_format::{render, Format};

/// The README's examples (the crate's page on crates.io), compiled as
/// doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
