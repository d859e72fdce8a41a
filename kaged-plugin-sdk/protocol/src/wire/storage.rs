//! Brokered storage methods (plugin to host, ADDENDUM §7).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The three storage methods a plugin may call on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum StorageMethod {
    /// `kaged.storage.exec`: a write or DDL statement (needs `kaged:storage:write`).
    #[serde(rename = "kaged.storage.exec")]
    Exec,
    /// `kaged.storage.query`: a read-only query (needs `kaged:storage:read`).
    #[serde(rename = "kaged.storage.query")]
    Query,
    /// `kaged.storage.schema`: list the plugin's tables (needs `kaged:storage:read`).
    #[serde(rename = "kaged.storage.schema")]
    Schema,
}

impl StorageMethod {
    /// Every storage method.
    pub const ALL: [StorageMethod; 3] = [
        StorageMethod::Exec,
        StorageMethod::Query,
        StorageMethod::Schema,
    ];

    /// The method name on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            StorageMethod::Exec => "kaged.storage.exec",
            StorageMethod::Query => "kaged.storage.query",
            StorageMethod::Schema => "kaged.storage.schema",
        }
    }

    /// The storage method with this wire name.
    pub fn parse(method: &str) -> Option<StorageMethod> {
        StorageMethod::ALL
            .into_iter()
            .find(|m| m.as_str() == method)
    }
}

/// A SQL parameter value: JSON null, boolean, number or string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SqlValue {
    /// NULL.
    Null,
    /// A boolean (stored as 0/1).
    Bool(bool),
    /// An integer or real.
    Number(serde_json::Number),
    /// Text.
    Text(String),
}

impl From<&str> for SqlValue {
    fn from(s: &str) -> SqlValue {
        SqlValue::Text(s.to_owned())
    }
}
impl From<String> for SqlValue {
    fn from(s: String) -> SqlValue {
        SqlValue::Text(s)
    }
}
impl From<i64> for SqlValue {
    fn from(n: i64) -> SqlValue {
        SqlValue::Number(n.into())
    }
}
impl From<bool> for SqlValue {
    fn from(b: bool) -> SqlValue {
        SqlValue::Bool(b)
    }
}
impl From<f64> for SqlValue {
    fn from(f: f64) -> SqlValue {
        serde_json::Number::from_f64(f).map_or(SqlValue::Null, SqlValue::Number)
    }
}
impl<T: Into<SqlValue>> From<Option<T>> for SqlValue {
    fn from(o: Option<T>) -> SqlValue {
        o.map_or(SqlValue::Null, Into::into)
    }
}

/// `kaged.storage.exec` / `kaged.storage.query` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StorageParams {
    /// Exactly one SQL statement.
    pub sql: String,
    /// Positional parameters.
    #[serde(default)]
    pub params: Vec<SqlValue>,
}

/// `kaged.storage.query` result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct QueryResult {
    /// One object per row, column name to value.
    pub rows: Vec<Map<String, Value>>,
    /// The column names, in order.
    pub columns: Vec<String>,
}

/// `kaged.storage.exec` result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ExecResult {
    /// Rows changed by the statement.
    pub rows_affected: u64,
}

/// `kaged.storage.schema` result.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SchemaResult {
    /// The plugin's table names, unprefixed.
    pub tables: Vec<String>,
}
