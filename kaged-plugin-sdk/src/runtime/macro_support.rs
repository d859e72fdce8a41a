//! Support for the code `#[kaged_plugin]` generates (re-exported as
//! `kaged_plugin_sdk::__private`; the traits also at the crate root).
//!
//! The traits are the builder's bounds, named: each carries a
//! `#[diagnostic::on_unimplemented]` message so that a handler the SDK
//! cannot call is reported in the author's terms, at the author's type.
//! Every type with the underlying bounds implements them.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::PluginError;

pub use super::schema_probe::{
    params_schema, HasResultSchema, HasSchema, NoResultSchema, NoSchema, ResultProbe, SchemaProbe,
};
pub use serde_json::Value;
pub use std::sync::Arc;

/// What a handler may return: `Result<T, E>` with `T: Serialize` and
/// `E: Into<PluginError>`.
#[diagnostic::on_unimplemented(
    message = "a kaged handler must return `Result<T, PluginError>` (T: serde::Serialize), not `{Self}`",
    label = "change the return type to `Result<{Self}, PluginError>`"
)]
pub trait HandlerResult {
    /// The success type.
    type Ok: Serialize + Send + 'static;
    /// The result with the error converted.
    fn into_result(self) -> Result<Self::Ok, PluginError>;
}

impl<T: Serialize + Send + 'static, E: Into<PluginError>> HandlerResult for Result<T, E> {
    type Ok = T;

    fn into_result(self) -> Result<T, PluginError> {
        self.map_err(Into::into)
    }
}

/// A handler's params type: `DeserializeOwned + Send + 'static`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a handler's params: it must implement `serde::Deserialize` (owned) and `Send`",
    label = "add `#[derive(serde::Deserialize)]` to `{Self}`"
)]
pub trait HandlerParams: DeserializeOwned + Send + 'static {}
impl<T: DeserializeOwned + Send + 'static> HandlerParams for T {}

/// A tool's (or the config's) arguments type: `DeserializeOwned +
/// JsonSchema + Send + 'static`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be tool arguments or a config type: it must implement `serde::Deserialize` and `schemars::JsonSchema`",
    label = "add `#[derive(serde::Deserialize, schemars::JsonSchema)]` to `{Self}`"
)]
pub trait SchemaParams: DeserializeOwned + JsonSchema + Send + 'static {}
impl<T: DeserializeOwned + JsonSchema + Send + 'static> SchemaParams for T {}

/// The plugin type itself, shared between concurrent calls.
#[diagnostic::on_unimplemented(
    message = "the plugin type `{Self}` must be `Send + Sync + 'static`: it is shared between concurrent calls",
    label = "wrap mutable state in `Mutex`/`RwLock` or atomics"
)]
pub trait PluginType: Send + Sync + 'static {}
impl<T: Send + Sync + 'static> PluginType for T {}

/// A handler's result, serialized, with the error converted. The generated
/// code names the return type in the turbofish so that a wrong one is
/// reported there, once (the builder then only sees a `Value`).
pub fn into_result<R: HandlerResult>(r: R) -> Result<Value, PluginError> {
    let ok = r.into_result()?;
    serde_json::to_value(ok).map_err(|e| {
        PluginError::with_code(
            crate::protocol::ErrorCode::InternalError,
            format!("could not serialize the result: {e}"),
        )
    })
}

/// Assert `T: PluginType`.
pub fn plugin_type<T: PluginType>() {}
