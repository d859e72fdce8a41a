//! Helpers shared by the host-sim test binaries; each binary includes
//! them with `#[path = "../support/mod.rs"] mod support;`.

pub mod as_nobody;
pub mod firing;
pub mod host;
pub mod projects;
pub mod storage;
pub mod storage_cli;
