//! A registry's worth of plugins certified on the CI it already runs
//! (issue 48): a registry file ([`file`]) becomes a CI matrix, one job per
//! plugin under one certifier's policy (`kaged-conformance matrix`:
//! [`matrix`]), and the JSON reports of those jobs become one page
//! (`kaged-conformance merge`: [`merge`], [`page`]), regressions first.

pub mod cli;
pub mod file;
pub mod matrix;
pub mod merge;
pub mod page;

pub use file::{Entry, Registry, RegistryError, Source};
pub use merge::{merge, Cell, Change, MergeError, Merged, Row, INDEX_SCHEMA};
