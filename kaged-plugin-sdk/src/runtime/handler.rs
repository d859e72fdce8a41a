//! Type-erased handlers and the decoding of params into the author's types.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::FutureExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use super::Host;
use crate::error::PluginError;
use crate::protocol::{take_context, ErrorCode, PluginCallContext, RpcError};

/// What a handler receives besides its arguments.
#[derive(Debug, Clone)]
pub struct Call {
    /// The `_context` the host sent, taken out of `params` (absent for
    /// daemon-level calls that carry none).
    pub context: Option<PluginCallContext>,
    /// The handle for notifications and storage.
    pub host: Host,
    /// The method being answered.
    pub method: String,
}

pub(crate) type BoxFut<T> = Pin<Box<dyn Future<Output = T> + Send>>;
pub(crate) type Erased = Arc<dyn Fn(Value, Call) -> BoxFut<Result<Value, RpcError>> + Send + Sync>;

/// How a method name is served.
#[derive(Clone)]
pub(crate) enum Route {
    /// A custom method: params minus `_context`, deserialized.
    Method(Erased),
    /// A tool: params minus `_context`, decoded (and, with the
    /// `schema-validation` feature, validated against the schema first) by
    /// [`erase_tool`].
    Tool(Erased),
    /// A hook: the whole params (with `_context`) deserialized.
    Hook(Erased),
}

/// Deserialize params, naming the offending field on failure.
pub(crate) fn decode<P: DeserializeOwned>(params: Value, code: ErrorCode) -> Result<P, RpcError> {
    // The fast path borrows the value and tracks no path; only a failure
    // is decoded again, with the path, to name the offending field.
    if let Ok(p) = P::deserialize(&params) {
        return Ok(p);
    }
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let at = if path == "." {
            String::new()
        } else {
            format!(" at `{path}`")
        };
        RpcError::new(code, format!("invalid params{at}: {}", e.inner()))
    })
}

/// Erase a typed async handler.
pub(crate) fn erase<P, R, F, Fut>(f: F, code: ErrorCode) -> Erased
where
    P: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(P, Call) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, PluginError>> + Send + 'static,
{
    erase_with(f, move |params| decode(params, code))
}

/// Erase a tool handler: its arguments decoded with
/// [`crate::tool::decode_args`] (errors name the field as a JSON pointer),
/// after validation against `schema` with the `schema-validation` feature.
pub(crate) fn erase_tool<A, R, F, Fut>(f: F, schema: &Value) -> Erased
where
    A: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(A, Call) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, PluginError>> + Send + 'static,
{
    #[cfg(feature = "schema-validation")]
    let validator = crate::tool::ArgsValidator::new(schema);
    #[cfg(not(feature = "schema-validation"))]
    let _ = schema;
    erase_with(f, move |args: Value| {
        #[cfg(feature = "schema-validation")]
        validator
            .validate(&args)
            .map_err(crate::tool::ArgsError::into_rpc)?;
        crate::tool::decode_args(args).map_err(crate::tool::ArgsError::into_rpc)
    })
}

/// Erase a typed async handler whose params `decode` makes.
fn erase_with<P, R, F, Fut, D>(f: F, decode: D) -> Erased
where
    P: Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(P, Call) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, PluginError>> + Send + 'static,
    D: Fn(Value) -> Result<P, RpcError> + Send + Sync + 'static,
{
    let f = Arc::new(f);
    let decode = Arc::new(decode);
    Arc::new(move |params: Value, call: Call| {
        let f = Arc::clone(&f);
        let decode = Arc::clone(&decode);
        Box::pin(async move {
            let p: P = decode(params)?;
            let r = f(p, call).await.map_err(PluginError::into_rpc)?;
            serde_json::to_value(r).map_err(|e| {
                RpcError::new(
                    ErrorCode::InternalError,
                    format!("could not serialize the result: {e}"),
                )
            })
        })
    })
}

impl Route {
    /// Run the handler for one call, catching panics.
    pub(crate) async fn invoke(
        &self,
        method: &str,
        params: Option<Value>,
        host: Host,
    ) -> Result<Value, RpcError> {
        let mut params = match params {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(p) => p,
        };
        let context = match params.as_object_mut() {
            Some(obj) => {
                let ctx = match self {
                    Route::Hook(..) => obj
                        .get(crate::protocol::CONTEXT_KEY)
                        .cloned()
                        .map(serde_json::from_value)
                        .transpose(),
                    _ => take_context(obj),
                };
                ctx.map_err(|e| {
                    RpcError::new(
                        ErrorCode::InvalidParams,
                        format!("invalid params at `_context`: {e}"),
                    )
                })?
            }
            None => None,
        };
        let call = Call {
            context,
            host,
            method: method.to_owned(),
        };
        let fut = match self {
            Route::Method(h) | Route::Hook(h) | Route::Tool(h) => h(params, call),
        };
        match AssertUnwindSafe(fut).catch_unwind().await {
            Ok(r) => r,
            Err(panic) => Err(RpcError::new(
                ErrorCode::InternalError,
                format!(
                    "handler for `{method}` panicked: {}",
                    panic_message(&*panic)
                ),
            )),
        }
    }
}

/// The text of a panic payload.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// A config handler: decoding failures answer `-32004`.
pub(crate) type ConfigHandler =
    Arc<dyn Fn(Value, Host) -> BoxFut<Result<(), RpcError>> + Send + Sync>;

/// A shutdown handler.
pub(crate) type ShutdownHandler = Arc<dyn Fn() -> BoxFut<()> + Send + Sync>;
