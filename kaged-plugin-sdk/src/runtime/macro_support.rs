//! Support for the code `#[kaged_plugin]` generates (re-exported as
//! `kaged_plugin_sdk::__private`). Not a stable API: use the builder.
//!
//! The marker traits carry `#[diagnostic::on_unimplemented]` messages so
//! that a handler the SDK cannot call is reported in the author's terms, at
//! the author's type.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::PluginError;

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

/// A handler's params type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a handler's params: it must implement `serde::Deserialize` (owned) and `Send`",
    label = "add `#[derive(serde::Deserialize)]` to `{Self}`"
)]
pub trait Params: DeserializeOwned + Send + 'static {}
impl<T: DeserializeOwned + Send + 'static> Params for T {}

/// A tool's (or the config's) arguments type.
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

/// Assert `T: Params` (the generated code calls this at the author's type).
pub fn params<T: Params>() {}

/// Assert `T: SchemaParams`.
pub fn schema_params<T: SchemaParams>() {}

/// Assert `T: PluginType`.
pub fn plugin_type<T: PluginType>() {}
