//! Lifecycle hooks fired through `AgentHost` on real plugin processes.

#[path = "../../../tests/support/mod.rs"]
mod support;

mod compact;
mod invalid;
mod knobs;
mod start;
