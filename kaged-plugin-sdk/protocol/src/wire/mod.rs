//! The wire types: JSON-RPC 2.0 envelopes, error codes, the handshake, call
//! context, hooks, compaction, storage and system methods, and the name
//! rules. Re-exported at the crate root.
//!
//! Every type here is `serde` + `schemars`, shared by the plugin side (the
//! SDK) and the daemon side (`kaged-host-sim`).

mod codes;
mod compaction;
mod context;
mod handshake;
mod hooks;
mod jsonrpc;
pub mod methods;
pub mod names;
mod storage;
mod system;

pub use codes::{
    ErrorCode, CAPABILITY_DENIED, CONFIG_INVALID, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST,
    METHOD_NOT_FOUND, NOT_APPLICABLE, NOT_INITIALIZED, PARSE_ERROR, PLUGIN_ERROR, RESOURCE_BUSY,
    STORAGE_ACCESS_DENIED,
};
pub use compaction::{
    always_keep_ids, drop_fallback, parse_observer_answer, parse_session_start_answer,
    validate_compactor_result, wrap_inject, CompactorPlan, CompactorViolation, DropOutcome,
};
pub use context::{inject_context, take_context, PartialContext, PluginCallContext, CONTEXT_KEY};
pub use handshake::{InitializeParams, InitializeResult, InitializedParams, API_VERSION};
pub use hooks::{
    CompactParams, CompactorResult, HookName, Message, MessageRole, ObserverResult, PluginRole,
    SessionIdleParams, SessionStartParams, SessionStartResult, Transcript,
};
pub use jsonrpc::{
    json_kind, Id, IdValue, MessageError, Notification, OtherId, Request, Response,
    ResponsePayload, RpcError, RpcMessage, Version,
};
pub use storage::{ExecResult, QueryResult, SchemaResult, SqlValue, StorageMethod, StorageParams};
pub use system::{
    ConfigUpdateParams, ProjectActivatedParams, ProjectDeactivatedParams, RateLimitedParams,
    StatusOk,
};
