//! # kaged-host-sim
//!
//! A simulated kaged daemon: the only daemon-side code of this workspace.
//! Its CLI, the conformance suite and every test drive it.

pub mod storage;
pub mod validate;
