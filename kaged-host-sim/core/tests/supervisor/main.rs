//! The plugin supervisor, with real subprocesses at small time scales.

#[path = "../../../tests/support/mod.rs"]
mod support;

mod clock;
mod gate;
mod helpers;
mod operator;
mod restart;
