//! Errors: [`PluginError`] is what a handler returns; [`SdkError`] is what
//! the runtime itself can fail with.

use serde_json::{json, Value};

use crate::codec::EncodeError;
use crate::protocol::{error_chain, ErrorCode, RpcError};

/// An error returned by a plugin handler, sent to the host as a JSON-RPC
/// error. The default code is `-32000` (`plugin_error`).
///
/// ```
/// use kaged_plugin_sdk::{PluginError, protocol::ErrorCode};
/// let e = PluginError::new("preset not found").with_data(serde_json::json!({"name": "x"}));
/// assert_eq!(e.code(), -32000);
/// let busy = PluginError::with_code(ErrorCode::ResourceBusy, "install running");
/// assert_eq!(busy.code(), -32005);
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct PluginError {
    code: i64,
    message: String,
    data: Option<Value>,
}

impl PluginError {
    /// A `-32000` plugin error.
    pub fn new(message: impl Into<String>) -> PluginError {
        PluginError {
            code: ErrorCode::PluginError.code(),
            message: message.into(),
            data: None,
        }
    }

    /// An error with one of the spec's codes.
    pub fn with_code(code: ErrorCode, message: impl Into<String>) -> PluginError {
        PluginError {
            code: code.code(),
            message: message.into(),
            data: None,
        }
    }

    /// An error with a domain code of the plugin's own (-32000 to -32099).
    /// Codes outside that range are replaced by `-32000`.
    pub fn with_domain_code(code: i64, message: impl Into<String>) -> PluginError {
        let code = if ErrorCode::is_plugin_range(code) {
            code
        } else {
            ErrorCode::PluginError.code()
        };
        PluginError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `-32602`: the params are wrong.
    pub fn invalid_params(message: impl Into<String>) -> PluginError {
        PluginError::with_code(ErrorCode::InvalidParams, message)
    }

    /// `-32004`: the config does not validate.
    pub fn config_invalid(message: impl Into<String>) -> PluginError {
        PluginError::with_code(ErrorCode::ConfigInvalid, message)
    }

    /// `-32006`: the method does not apply in this context.
    pub fn not_applicable(message: impl Into<String>) -> PluginError {
        PluginError::with_code(ErrorCode::NotApplicable, message)
    }

    /// `-32005`: busy, retry later.
    pub fn busy(message: impl Into<String>) -> PluginError {
        PluginError::with_code(ErrorCode::ResourceBusy, message)
    }

    /// Build a `-32000` error from any error, with its cause chain in
    /// `data.causes`.
    pub fn from_error(err: &(dyn std::error::Error + 'static)) -> PluginError {
        let causes = error_chain::causes(err);
        PluginError::new(err.to_string()).with_data(json!({ "causes": causes }))
    }

    /// Attach structured details.
    pub fn with_data(mut self, data: Value) -> PluginError {
        self.data = Some(data);
        self
    }

    /// The JSON-RPC code.
    pub fn code(&self) -> i64 {
        self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The details, if any.
    pub fn data(&self) -> Option<&Value> {
        self.data.as_ref()
    }

    /// The wire form.
    pub fn into_rpc(self) -> RpcError {
        RpcError {
            code: self.code,
            message: self.message,
            data: self.data,
        }
    }
}

impl From<RpcError> for PluginError {
    fn from(e: RpcError) -> PluginError {
        PluginError {
            code: e.code,
            message: e.message,
            data: e.data,
        }
    }
}

impl From<std::io::Error> for PluginError {
    fn from(e: std::io::Error) -> PluginError {
        PluginError::from_error(&e)
    }
}

impl From<serde_json::Error> for PluginError {
    fn from(e: serde_json::Error) -> PluginError {
        PluginError::from_error(&e)
    }
}

impl From<SdkError> for PluginError {
    fn from(e: SdkError) -> PluginError {
        PluginError::from_error(&e)
    }
}

/// A failure of the SDK runtime itself.
#[derive(Debug, thiserror::Error)]
pub enum SdkError {
    /// Reading or writing the protocol streams failed.
    #[error("protocol stream I/O failed: {0}")]
    Io(#[from] std::io::Error),
    /// A message could not be encoded (too large, or not serializable).
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// The connection to the host is closed.
    #[error("the connection to the host is closed")]
    Disconnected,
    /// A notification name breaks the naming rules.
    #[error("invalid notification name: {0}")]
    InvalidName(String),
    /// The plugin's declarations are inconsistent (duplicate names...).
    #[error("invalid plugin definition: {0}")]
    Definition(String),
}
