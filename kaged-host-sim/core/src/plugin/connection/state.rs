//! The small types of the connection: handshake phase, life state, fatal
//! conditions and request errors.

use std::time::Duration;

use kaged_plugin_protocol::codec::EncodeError;
use kaged_plugin_protocol::RpcError;

use crate::observe::audit::AuditEvent;

/// Where the connection stands in the handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Nothing sent yet: any message from the plugin is a violation.
    Spawned,
    /// `initialize` sent, `initialized` not yet.
    InitializeSent,
    /// Handshake complete.
    Ready,
}

/// Where the plugin stands in its life; decides who audits its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    Running,
    ShuttingDown,
    Killing,
    Ended,
}

/// Why the host must kill the plugin (already audited when raised).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fatal {
    /// The audit event that was emitted.
    pub event: AuditEvent,
    /// A short reason (`batch_before_handshake`, `oversize_message`...).
    pub reason: String,
    /// Details.
    pub detail: String,
}

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The plugin answered with an error.
    #[error(transparent)]
    Rpc(RpcError),
    /// No answer in time.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The connection closed first.
    #[error("the connection to the plugin is closed")]
    Closed,
    /// The request could not be encoded.
    #[error(transparent)]
    Encode(#[from] EncodeError),
}
