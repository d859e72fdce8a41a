//! Every JSON-RPC error code of the kaged plugin protocol, as data.
//!
//! The table [`ErrorCode::ALL`] is the single source for code numbers, names
//! and meanings: the SDK, the host simulator and the generated docs all read
//! it.

use serde::{Deserialize, Serialize};

/// A JSON-RPC error code defined by the spec (`plugin-host.md`, Error codes).
///
/// ```
/// use kaged_plugin_protocol::ErrorCode;
/// assert_eq!(ErrorCode::NotInitialized.code(), -32002);
/// assert_eq!(ErrorCode::from_code(-32601), Some(ErrorCode::MethodNotFound));
/// assert_eq!(ErrorCode::StorageAccessDenied.name(), "storage_access_denied");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// -32700: malformed JSON.
    ParseError,
    /// -32600: not a valid JSON-RPC 2.0 object (or a batch, which is forbidden).
    InvalidRequest,
    /// -32601: the peer does not implement the requested method.
    MethodNotFound,
    /// -32602: the method exists but the params are wrong.
    InvalidParams,
    /// -32603: unspecified internal failure.
    InternalError,
    /// -32000: generic plugin-domain error; `data` should carry details.
    PluginError,
    /// -32001: the plugin attempted an operation it has no capability for.
    CapabilityDenied,
    /// -32002: a message arrived before the handshake completed.
    NotInitialized,
    /// -32003: storage operation outside the plugin's schema or without capability.
    StorageAccessDenied,
    /// -32004: the plugin rejected a `config.update`.
    ConfigInvalid,
    /// -32005: the plugin is busy; the client should retry.
    ResourceBusy,
    /// -32006: the method exists but does not apply in this context.
    NotApplicable,
}

impl ErrorCode {
    /// Every code, in the spec's table order.
    pub const ALL: [ErrorCode; 12] = [
        ErrorCode::ParseError,
        ErrorCode::InvalidRequest,
        ErrorCode::MethodNotFound,
        ErrorCode::InvalidParams,
        ErrorCode::InternalError,
        ErrorCode::PluginError,
        ErrorCode::CapabilityDenied,
        ErrorCode::NotInitialized,
        ErrorCode::StorageAccessDenied,
        ErrorCode::ConfigInvalid,
        ErrorCode::ResourceBusy,
        ErrorCode::NotApplicable,
    ];

    /// The numeric code sent on the wire.
    pub const fn code(self) -> i64 {
        match self {
            ErrorCode::ParseError => -32700,
            ErrorCode::InvalidRequest => -32600,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::InvalidParams => -32602,
            ErrorCode::InternalError => -32603,
            ErrorCode::PluginError => -32000,
            ErrorCode::CapabilityDenied => -32001,
            ErrorCode::NotInitialized => -32002,
            ErrorCode::StorageAccessDenied => -32003,
            ErrorCode::ConfigInvalid => -32004,
            ErrorCode::ResourceBusy => -32005,
            ErrorCode::NotApplicable => -32006,
        }
    }

    /// The spec's name for the code (`parse_error`, `not_initialized`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            ErrorCode::ParseError => "parse_error",
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::MethodNotFound => "method_not_found",
            ErrorCode::InvalidParams => "invalid_params",
            ErrorCode::InternalError => "internal_error",
            ErrorCode::PluginError => "plugin_error",
            ErrorCode::CapabilityDenied => "capability_denied",
            ErrorCode::NotInitialized => "not_initialized",
            ErrorCode::StorageAccessDenied => "storage_access_denied",
            ErrorCode::ConfigInvalid => "config_invalid",
            ErrorCode::ResourceBusy => "resource_busy",
            ErrorCode::NotApplicable => "not_applicable",
        }
    }

    /// The spec's one-line meaning of the code.
    pub const fn meaning(self) -> &'static str {
        match self {
            ErrorCode::ParseError => "Malformed JSON",
            ErrorCode::InvalidRequest => {
                "Not a valid JSON-RPC 2.0 object (or batch, which is forbidden)"
            }
            ErrorCode::MethodNotFound => "Plugin does not implement the requested method",
            ErrorCode::InvalidParams => "Method exists but params are wrong",
            ErrorCode::InternalError => "Unspecified plugin-internal failure",
            ErrorCode::PluginError => "Generic plugin-domain error. data field should contain details.",
            ErrorCode::CapabilityDenied => {
                "Plugin attempted an operation it doesn't have capability for."
            }
            ErrorCode::NotInitialized => "Message received before handshake completed.",
            ErrorCode::StorageAccessDenied => {
                "Plugin attempted storage operation outside its schema or without capability."
            }
            ErrorCode::ConfigInvalid => {
                "Plugin rejected a config.update because the config doesn't validate."
            }
            ErrorCode::ResourceBusy => "Plugin is busy (e.g., already running an install). Client should retry.",
            ErrorCode::NotApplicable => {
                "Method exists but doesn't apply in this context (e.g., calling a project-scoped method with no project context)."
            }
        }
    }

    /// The code with this number, if the spec defines one.
    pub fn from_code(code: i64) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.code() == code)
    }

    /// Whether `code` lies in the range plugins may use for domain errors
    /// (-32000 to -32099).
    pub const fn is_plugin_range(code: i64) -> bool {
        code <= -32000 && code >= -32099
    }
}

/// -32700, see [`ErrorCode::ParseError`].
pub const PARSE_ERROR: i64 = ErrorCode::ParseError.code();
/// -32600, see [`ErrorCode::InvalidRequest`].
pub const INVALID_REQUEST: i64 = ErrorCode::InvalidRequest.code();
/// -32601, see [`ErrorCode::MethodNotFound`].
pub const METHOD_NOT_FOUND: i64 = ErrorCode::MethodNotFound.code();
/// -32602, see [`ErrorCode::InvalidParams`].
pub const INVALID_PARAMS: i64 = ErrorCode::InvalidParams.code();
/// -32603, see [`ErrorCode::InternalError`].
pub const INTERNAL_ERROR: i64 = ErrorCode::InternalError.code();
/// -32000, see [`ErrorCode::PluginError`].
pub const PLUGIN_ERROR: i64 = ErrorCode::PluginError.code();
/// -32001, see [`ErrorCode::CapabilityDenied`].
pub const CAPABILITY_DENIED: i64 = ErrorCode::CapabilityDenied.code();
/// -32002, see [`ErrorCode::NotInitialized`].
pub const NOT_INITIALIZED: i64 = ErrorCode::NotInitialized.code();
/// -32003, see [`ErrorCode::StorageAccessDenied`].
pub const STORAGE_ACCESS_DENIED: i64 = ErrorCode::StorageAccessDenied.code();
/// -32004, see [`ErrorCode::ConfigInvalid`].
pub const CONFIG_INVALID: i64 = ErrorCode::ConfigInvalid.code();
/// -32005, see [`ErrorCode::ResourceBusy`].
pub const RESOURCE_BUSY: i64 = ErrorCode::ResourceBusy.code();
/// -32006, see [`ErrorCode::NotApplicable`].
pub const NOT_APPLICABLE: i64 = ErrorCode::NotApplicable.code();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_round_trip() {
        for c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_code(c.code()), Some(c));
            assert!(c.code() < -32000 + 1);
        }
        let mut codes: Vec<i64> = ErrorCode::ALL.iter().map(|c| c.code()).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), ErrorCode::ALL.len());
        assert!(ErrorCode::is_plugin_range(-32099));
        assert!(!ErrorCode::is_plugin_range(-32100));
        assert!(!ErrorCode::is_plugin_range(-32603));
    }
}
