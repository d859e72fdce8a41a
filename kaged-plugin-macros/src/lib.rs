//! Attribute macros for kaged plugins (`#[kaged_plugin]`, `#[method]`, `#[hook]`, `#[tool]`).
//!
//! The macros expand to calls on the SDK's builder API
//! (`kaged_plugin_sdk::Plugin::builder`), which stays a first-class way to
//! write a plugin by hand. They arrive with issue #4; until then this crate
//! exports nothing.
