//! # cargo-kaged
//!
//! Layers, top first (`scripts/module-layers.py` checks that every import
//! runs down): <!-- layers: cli > certify > packing scaffold > cargo > error -->
//!
//! Cargo subcommands for writing kaged plugins in Rust, from a new package
//! to a certified, installable plugin directory:
//!
//! - `cargo kaged new NAME [--hooks] [--tool] [--storage] [--kit-path DIR]`
//!   ([`scaffold`]): a plugin package that builds, passes its own tests
//!   (the manifest drift test and `assert_conforms`) and the conformance
//!   suite with zero edits.
//! - `cargo kaged pack [-p PACKAGE] [--out DIR]` ([`packing`]): a release
//!   build, then a self-contained plugin directory (ADDENDUM §14): the
//!   binary under `bin/`, `kaged-plugin.yaml` from `--print-manifest` with
//!   `command: [./bin/NAME]`.
//! - `cargo kaged test [-p PACKAGE] [conformance flags]` ([`certify`]):
//!   pack into a temporary directory, install it the way the daemon does,
//!   and run the conformance suite on the installed copy.
//!
//! The binary is `cargo-kaged`; cargo runs it for `cargo kaged ...` once it
//! is on `PATH` (`cargo install cargo-kaged`).

pub mod cargo;
pub mod certify;
pub mod cli;
pub mod error;
pub mod packing;
pub mod scaffold;

pub use error::KagedError;
