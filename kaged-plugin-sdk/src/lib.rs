//! # kaged-plugin-sdk
//!
//! Write kaged plugins in Rust: the SDK speaks the whole plugin side of the
//! protocol (framing, handshake, routing, `_context`, tools with schemas,
//! hooks, notifications, the storage proxy, stderr-only logging, ping and
//! shutdown) so that a plugin is its handlers and nothing else.
//!
//! Layers, top first (`scripts/module-layers.py` checks that every import
//! runs down): <!-- layers: migrations > storage testing > runtime > describe > codec error logging tool -->
//!
//! ```no_run
//! use kaged_plugin_sdk::{plugin, Call, PluginError};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Shout { text: String }
//!
//! fn main() {
//!     plugin!("echo")
//!         .method("echo.say", |p: serde_json::Value, _call: Call| async move {
//!             Ok::<_, PluginError>(p)
//!         })
//!         .tool("shout", "Upper-case the text.", |a: Shout, _call: Call| async move {
//!             Ok::<_, PluginError>(a.text.to_uppercase())
//!         })
//!         .run()
//! }
//! ```
//!
//! Modules: [`protocol`] (the `kaged-plugin-protocol` crate, re-exported:
//! wire types, name rules, capabilities, shared with the host simulator),
//! [`codec`] (line framing: the protocol crate's, with its async reader),
//! [`manifest`] (`kaged-plugin.yaml`, from the protocol crate too), the
//! runtime ([`Plugin`], [`Call`], [`Host`]), [`storage`], [`tool`],
//! [`logging`], [`describe`] (the manifest the code implies) and
//! [`testing`].
//!
//! ## Cargo features
//!
//! - `schema-validation` (off by default): tool arguments are validated
//!   against the whole JSON Schema with the `jsonschema` crate (ranges,
//!   lengths, patterns) before they deserialize, and [`tool::check_tool`]
//!   meta-validates schemas. Without it the arguments are validated by
//!   deserializing the argument type ([`tool::decode_args`]): a missing,
//!   unexpected or mistyped field answers `-32602` naming the field, and a
//!   plugin binary links no JSON Schema validator (see [`tool`]).

extern crate self as kaged_plugin_sdk;

pub mod codec;
pub mod describe;
mod error;
pub mod logging;
pub mod migrations;
mod runtime;
pub mod storage;
pub mod testing;
pub mod tool;

/// The wire protocol: the `kaged-plugin-protocol` crate.
pub use kaged_plugin_protocol as protocol;
/// The `kaged-plugin.yaml` model and parser (`kaged_plugin_protocol::manifest`).
pub use kaged_plugin_protocol::manifest;

pub use kaged_plugin_macros::kaged_plugin;
#[doc(hidden)]
pub use runtime::hook_types as __hook_types;
#[doc(hidden)]
pub use runtime::macro_support as __private;
pub use runtime::macro_support::{HandlerParams, HandlerResult, SchemaParams};
pub use runtime::KagedPlugin;

pub use error::{PluginError, SdkError};
pub use migrations::Migrations;
pub use runtime::{stdio, Call, Host, HostCallError, Plugin, PluginBuilder, ServeExit};

/// The README's example (the crate's page on crates.io), compiled as a
/// doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The authoring guide (`docs/authoring.md`): its snippets are doctests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/authoring.md")]
pub struct AuthoringGuide;

/// `tracing`, re-exported: log with `kaged_plugin_sdk::log::info!(...)`.
pub use tracing as log;
