//! The storage proxy: `kaged.storage.query`, `.exec` and `.schema` sent to
//! the host, which runs them against the plugin's own tables (ADDENDUM §7).

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::error::{PluginError, SdkError};
use crate::protocol::{
    ErrorCode, ExecResult, QueryResult, RpcError, SchemaResult, SqlValue, StorageMethod,
};
use crate::runtime::{Host, HostCallError};

/// Build a `Vec<SqlValue>` from mixed values.
///
/// ```
/// use kaged_plugin_sdk::{sql_params, protocol::SqlValue};
/// let p = sql_params!["p1", 3i64, true, None::<String>];
/// assert_eq!(p[0], SqlValue::Text("p1".into()));
/// assert_eq!(p[3], SqlValue::Null);
/// ```
#[macro_export]
macro_rules! sql_params {
    ($($v:expr),* $(,)?) => {
        vec![$($crate::protocol::SqlValue::from($v)),*]
    };
}

/// A storage call that failed.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// `-32003`: outside the plugin's tables, a forbidden statement, or no
    /// storage capability.
    /// The host's message already says "storage access denied"; it is shown
    /// once.
    #[error("{}", denied_message(&.0.message))]
    Denied(RpcError),
    /// `-32602`: malformed SQL params.
    #[error("invalid storage params: {}", .0.message)]
    InvalidParams(RpcError),
    /// Any other error answer (SQL errors and the like).
    #[error("storage error {}: {}", .0.code, .0.message)]
    Failed(RpcError),
    /// The answer did not have the expected shape.
    #[error("could not decode the storage answer: {0}")]
    Decode(#[from] serde_json::Error),
    /// The request could not be sent or answered.
    #[error(transparent)]
    Connection(SdkError),
}

impl StorageError {
    /// The wire error, when the host answered one.
    pub fn rpc(&self) -> Option<&RpcError> {
        match self {
            StorageError::Denied(e) | StorageError::InvalidParams(e) | StorageError::Failed(e) => {
                Some(e)
            }
            _ => None,
        }
    }
}

impl From<HostCallError> for StorageError {
    fn from(e: HostCallError) -> StorageError {
        match e {
            HostCallError::Rpc(e) if e.code == ErrorCode::StorageAccessDenied.code() => {
                StorageError::Denied(e)
            }
            HostCallError::Rpc(e) if e.code == ErrorCode::InvalidParams.code() => {
                StorageError::InvalidParams(e)
            }
            HostCallError::Rpc(e) => StorageError::Failed(e),
            HostCallError::Sdk(e) => StorageError::Connection(e),
        }
    }
}

/// `message` with one "storage access denied: " in front.
fn denied_message(message: &str) -> String {
    const PREFIX: &str = "storage access denied";
    if message.starts_with(PREFIX) {
        message.to_string()
    } else {
        format!("{PREFIX}: {message}")
    }
}

impl From<StorageError> for PluginError {
    /// So that `?` works in handlers: a denial keeps its meaning, `-32003`
    /// with the host's message (and its `data`, when it had one); any other
    /// storage error is a `-32000` with the storage error's causes (see
    /// [`PluginError::from_error`]): invalid SQL params are the plugin's
    /// fault, not its caller's, so they are not answered `-32602`.
    ///
    /// ```
    /// use kaged_plugin_sdk::protocol::{ErrorCode, RpcError};
    /// use kaged_plugin_sdk::{storage::StorageError, PluginError};
    /// let host = RpcError::new(ErrorCode::StorageAccessDenied, "storage access denied: table other_plugin_notes is not yours");
    /// let e: PluginError = StorageError::Denied(host).into();
    /// assert_eq!(e.code(), -32003);
    /// assert_eq!(e.message(), "storage access denied: table other_plugin_notes is not yours");
    /// ```
    fn from(e: StorageError) -> PluginError {
        match e {
            StorageError::Denied(rpc) => {
                let err = PluginError::with_code(
                    ErrorCode::StorageAccessDenied,
                    denied_message(&rpc.message),
                );
                match rpc.data {
                    Some(data) => err.with_data(data),
                    None => err,
                }
            }
            other => PluginError::from_error(&other),
        }
    }
}

impl Host {
    /// The typed storage client.
    pub fn storage(&self) -> Storage {
        Storage::new(self.clone())
    }
}

/// The typed storage client, from [`Host::storage`].
#[derive(Debug, Clone)]
pub struct Storage {
    host: Host,
}

impl Storage {
    fn new(host: Host) -> Storage {
        Storage { host }
    }

    async fn call(&self, method: StorageMethod, params: Value) -> Result<Value, StorageError> {
        Ok(self.host.request(method.as_str(), params).await?)
    }

    /// Run a read-only query; rows come back as JSON objects.
    pub async fn query(
        &self,
        sql: &str,
        params: Vec<SqlValue>,
    ) -> Result<QueryResult, StorageError> {
        let v = self
            .call(
                StorageMethod::Query,
                json!({ "sql": sql, "params": params }),
            )
            .await?;
        Ok(serde_json::from_value(v)?)
    }

    /// Run a query and deserialize each row into `T`.
    pub async fn query_as<T: DeserializeOwned>(
        &self,
        sql: &str,
        params: Vec<SqlValue>,
    ) -> Result<Vec<T>, StorageError> {
        let result = self.query(sql, params).await?;
        result
            .rows
            .into_iter()
            .map(|row| serde_json::from_value(Value::Object(row)).map_err(StorageError::from))
            .collect()
    }

    /// Run one write or DDL statement (in a transaction on the host).
    pub async fn exec(&self, sql: &str, params: Vec<SqlValue>) -> Result<ExecResult, StorageError> {
        let v = self
            .call(StorageMethod::Exec, json!({ "sql": sql, "params": params }))
            .await?;
        Ok(serde_json::from_value(v)?)
    }

    /// List the plugin's tables (unprefixed).
    pub async fn schema(&self) -> Result<SchemaResult, StorageError> {
        let v = self.call(StorageMethod::Schema, json!({})).await?;
        Ok(serde_json::from_value(v)?)
    }
}
