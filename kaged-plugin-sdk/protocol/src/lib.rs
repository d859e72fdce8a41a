//! # kaged-plugin-protocol
//!
//! The kaged plugin protocol as data, with no runtime: what both sides of a
//! plugin connection must agree on, and nothing about how either side runs.
//! Like `nu-plugin-protocol` next to nushell's plugin engine, or
//! `jsonrpsee-types` under jsonrpsee's client and server, it is types only:
//! no async runtime, no processes, no I/O (but for the opt-in `tokio`
//! feature: the async line reader and writer both sides use).
//!
//! Layers, top first (`scripts/module-layers.py` checks that every import
//! runs down): <!-- layers: profile > manifest > capability codec error_chain text wire -->
//!
//! - the wire types, at the crate root: JSON-RPC 2.0 envelopes
//!   ([`RpcMessage`], [`Request`], [`Response`], [`Notification`], [`Id`]),
//!   [`ErrorCode`]s, the handshake ([`InitializeParams`],
//!   [`InitializeResult`]), the call context ([`PluginCallContext`]), hooks
//!   and compaction ([`HookName`], [`CompactParams`], ...), storage
//!   ([`StorageMethod`], [`SqlValue`], ...) and system methods;
//! - [`methods`]: the system method names; [`names`]: the name rules
//!   (methods, tools, plugins, knobs, hooks, roles, the storage prefix);
//! - [`codec`]: line framing (one JSON message per line, at most 4 MiB), as
//!   a decoder fed bytes and an encoder; with the cargo feature `tokio`,
//!   also `codec::LineReader` and `codec::write_line` over tokio's async
//!   I/O traits (tokio with `io-util` only: no runtime is started here);
//! - [`capability`]: the capability grammar, typed;
//! - [`manifest`]: the `kaged-plugin.yaml` model and its located YAML
//!   parser (rule checks live in the host's validator);
//! - [`profile`]: the conformance profile (`kaged-conformance.yaml`): per
//!   custom method, example params, schemas and refused params;
//! - [`error_chain`]: an error and its causes as one line of text;
//! - [`text`]: a long value cut to a report line's length.
//!
//! `kaged-plugin-sdk` (the plugin side, which re-exports this crate as
//! `kaged_plugin_sdk::protocol`), `kaged-plugin-macros` (compile-time name
//! checks) and `kaged-host-sim` (the daemon side) all build on it.
//!
//! ```
//! use kaged_plugin_protocol::{codec, methods, Request, RpcMessage};
//! let line = codec::encode_line(&Request::new(1, methods::PING, None)).unwrap();
//! assert_eq!(line, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
//! let back = RpcMessage::from_slice(&line[..line.len() - 1]).unwrap();
//! assert!(matches!(back, RpcMessage::Request(r) if r.method == methods::PING));
//! ```

pub mod capability;
pub mod codec;
pub mod error_chain;
pub mod manifest;
pub mod profile;
pub mod text;
mod wire;

pub use wire::{
    always_keep_ids, drop_fallback, inject_context, json_kind, methods, names,
    parse_observer_answer, parse_session_start_answer, take_context, validate_compactor_result,
    wrap_inject, CompactParams, CompactorPlan, CompactorResult, CompactorViolation,
    ConfigUpdateParams, DropOutcome, ErrorCode, ExecResult, HookName, Id, IdValue,
    InitializeParams, InitializeResult, InitializedParams, Message, MessageError, MessageRole,
    Notification, ObserverResult, OtherId, PartialContext, PluginCallContext, PluginRole,
    ProjectActivatedParams, ProjectDeactivatedParams, QueryResult, RateLimitedParams, Request,
    Response, ResponsePayload, RpcError, RpcMessage, SchemaResult, SessionIdleParams,
    SessionStartParams, SessionStartResult, SqlValue, StatusOk, StorageMethod, StorageParams,
    Transcript, Version, API_VERSION, CAPABILITY_DENIED, CONFIG_INVALID, CONTEXT_KEY,
    INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, NOT_APPLICABLE,
    NOT_INITIALIZED, PARSE_ERROR, PLUGIN_ERROR, RESOURCE_BUSY, STORAGE_ACCESS_DENIED,
};

/// The README's example, compiled as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
