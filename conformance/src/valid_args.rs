//! How an answer to arguments that satisfy a tool's `parameters_schema`
//! is judged, written once for `run` (`methods.tool_valid_args`) and
//! `fuzz` (`fuzz.valid_args_accepted`): a result, or a *domain error*,
//! passes; anything else is the plugin refusing or failing on input its
//! own schema allows.
//!
//! A domain error is the plugin saying no about the world, not about the
//! arguments: a code of the plugin range (-32000..-32099) with a message,
//! other than those the spec gives another meaning: -32001
//! (capability_denied: it lacks a capability it needs), -32002
//! (not_initialized), -32003 (storage_access_denied: its own storage was
//! refused), -32004 (config_invalid) and -32006 (not_applicable: a tool an
//! agent dispatches applies to it). -32602 says the schema is incomplete;
//! -32603 is a crash the plugin caught.

use kaged_plugin_protocol::ErrorCode;

/// The verdict on one answer to schema-valid arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValidArgsAnswer {
    /// A result, or a domain error (the arguments were accepted).
    Accepted,
    /// An error the arguments do not excuse; why, in a few words.
    Refused(&'static str),
}

/// Judge error `code` with `message` answered to schema-valid arguments.
///
/// ```
/// use kaged_conformance::valid_args::{judge_error, ValidArgsAnswer};
/// assert_eq!(judge_error(-32010, "no such note"), ValidArgsAnswer::Accepted);
/// assert!(matches!(judge_error(-32603, "TypeError"), ValidArgsAnswer::Refused(_)));
/// assert!(matches!(judge_error(-32003, "denied"), ValidArgsAnswer::Refused(_)));
/// assert!(matches!(judge_error(-32000, ""), ValidArgsAnswer::Refused(_)));
/// ```
pub fn judge_error(code: i64, message: &str) -> ValidArgsAnswer {
    let refused = |why| ValidArgsAnswer::Refused(why);
    match code {
        c if c == ErrorCode::InvalidParams.code() => {
            refused("the tool rejects arguments its schema accepts: the schema is incomplete")
        }
        c if c == ErrorCode::InternalError.code() => refused(
            "an internal error on arguments its schema accepts: the handler failed (a caught exception?)",
        ),
        c if c == ErrorCode::CapabilityDenied.code() => {
            refused("a capability it needs is missing: the tool cannot work in the daemon")
        }
        c if c == ErrorCode::NotInitialized.code() => refused("not initialized, after initialized"),
        c if c == ErrorCode::StorageAccessDenied.code() => {
            refused("its storage was refused: the tool cannot work in the daemon")
        }
        c if c == ErrorCode::ConfigInvalid.code() => refused("config_invalid is for config.update"),
        c if c == ErrorCode::NotApplicable.code() => {
            refused("a tool dispatched by an agent must apply to it")
        }
        c if ErrorCode::is_plugin_range(c) && message.trim().is_empty() => {
            refused("a domain error says what went wrong: its message is empty")
        }
        c if ErrorCode::is_plugin_range(c) => ValidArgsAnswer::Accepted,
        _ => refused("not a domain error (-32000..-32099)"),
    }
}
