//! # kaged-conformance
//!
//! Runs `kaged-host-sim` against any plugin binary, in any language, and
//! reports per-case verdicts for humans and CI (JSON, JUnit, TAP). The
//! command line and JSON report follow ADDENDUM §11.

pub mod catalogue;
pub mod list;
pub mod report;
pub mod selection;
