//! Agents: project files, operator-local config, resolution, roles and
//! tool registries (pure logic, no processes).

#[path = "../../../tests/support/mod.rs"]
mod support;

mod config;
mod persist;
mod project;
mod resolve;
mod roles;
mod tools;
