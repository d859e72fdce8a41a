//! The `kaged-host-sim` command line, run as a user runs it.

#[path = "../support/mod.rs"]
mod support;

mod bench;
mod cage;
mod caging;
mod commands;
mod first_hour;
mod golden;
mod plugin;
mod project;
mod scripts;
mod storage;
mod storage_cli;
mod storage_usage;
