//! Who calls the broker, and how a call fails.

use kaged_plugin_protocol::capability::Capability;
use kaged_plugin_protocol::{ErrorCode, RpcError};

use super::redact::redact_sql;

/// Who is calling: the plugin and what it may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageClient {
    /// The plugin's name (`^[a-z][a-z0-9-]*$`).
    pub plugin: String,
    /// Holds `kaged:storage:read`.
    pub can_read: bool,
    /// Holds `kaged:storage:write` (which implies read).
    pub can_write: bool,
    /// Whether the daemon has storage ready for this plugin (`storage_available`).
    pub storage_available: bool,
}

impl StorageClient {
    /// A client with storage available.
    pub fn new(plugin: impl Into<String>, can_read: bool, can_write: bool) -> StorageClient {
        StorageClient {
            plugin: plugin.into(),
            can_read,
            can_write,
            storage_available: true,
        }
    }

    /// A client from the plugin's granted capability strings.
    pub fn from_capabilities<'a>(
        plugin: impl Into<String>,
        capabilities: impl IntoIterator<Item = &'a str>,
        storage_available: bool,
    ) -> StorageClient {
        let (mut can_read, mut can_write) = (false, false);
        for c in capabilities {
            match Capability::parse(c) {
                Ok(Capability::StorageRead) => can_read = true,
                Ok(Capability::StorageWrite) => can_write = true,
                _ => {}
            }
        }
        StorageClient {
            plugin: plugin.into(),
            can_read,
            can_write,
            storage_available,
        }
    }

    /// May call `query` and `schema`.
    pub fn may_read(&self) -> bool {
        self.storage_available && (self.can_read || self.can_write)
    }

    /// May call `exec`.
    pub fn may_write(&self) -> bool {
        self.storage_available && self.can_write
    }
}

/// A refused or failed storage call: the JSON-RPC error to answer, and what
/// to put in the audit log.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{error} ({reason})")]
pub struct StorageDenial {
    /// The error to send to the plugin (never mentions the prefix; boxed
    /// to keep `Result<_, StorageDenial>` small).
    pub error: Box<RpcError>,
    /// Why, for the operator (the `plugin.storage_denied` event).
    pub reason: String,
    /// The plugin's SQL, redacted with [`redact_sql`], when there was some.
    pub redacted_sql: Option<String>,
    /// Whether the host audits this as `plugin.storage_denied`: every
    /// `-32003` ([`StorageDenial::denied`], [`StorageDenial::not_own`]).
    pub audited: bool,
    /// The capability the call needed and the plugin lacks (audited as
    /// the record's `capability`), when that is why it was refused.
    pub missing_capability: Option<&'static str>,
}

impl StorageDenial {
    /// Whether this is an access denial, which the host audits as
    /// `plugin.storage_denied`: a `-32003`, or a refusal that answers the
    /// plugin exactly as if the object did not exist.
    pub fn is_access_denial(&self) -> bool {
        self.audited
    }

    /// The JSON-RPC error to answer.
    pub fn into_rpc_error(self) -> RpcError {
        *self.error
    }

    /// A `-32003` denial.
    pub fn denied(reason: impl Into<String>, sql: Option<&str>) -> StorageDenial {
        let reason = reason.into();
        StorageDenial::with(
            ErrorCode::StorageAccessDenied,
            format!("storage access denied: {reason}"),
            reason,
            sql,
        )
    }

    /// A refusal to touch `name` (unprefixed, any case) because it is not
    /// the plugin's own: `-32003` like every denial (ADDENDUM §16), its
    /// message naming `name` as the plugin wrote it and nothing of whose
    /// it is; `reason` (the real one, the owner) is audited.
    pub fn not_own(name: &str, reason: impl Into<String>, sql: Option<&str>) -> StorageDenial {
        let lower = name.to_ascii_lowercase();
        let written = sql
            .and_then(|s| {
                let i = s.to_ascii_lowercase().find(&lower)?;
                s.get(i..i + lower.len())
            })
            .unwrap_or(name);
        StorageDenial {
            audited: true,
            ..StorageDenial::with(
                ErrorCode::StorageAccessDenied,
                format!("storage access denied: `{written}` is not one of this plugin's tables"),
                reason,
                sql,
            )
        }
    }

    /// An error of another code; `message` goes to the plugin.
    pub fn with(
        code: ErrorCode,
        message: impl Into<String>,
        reason: impl Into<String>,
        sql: Option<&str>,
    ) -> StorageDenial {
        StorageDenial {
            error: Box::new(RpcError::new(code, message)),
            reason: reason.into(),
            redacted_sql: sql.map(redact_sql),
            audited: code == ErrorCode::StorageAccessDenied,
            missing_capability: None,
        }
    }

    /// A `-32003` denial because the plugin lacks `capability`, which
    /// `method` needs.
    pub fn lacks(capability: &'static str, method: &str, sql: Option<&str>) -> StorageDenial {
        StorageDenial {
            missing_capability: Some(capability),
            ..StorageDenial::denied(format!("{method} needs {capability}"), sql)
        }
    }
}

/// Errors opening the broker or administering it.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// SQLite failed.
    #[error("storage database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The temporary directory could not be created.
    #[error("storage temp dir: {0}")]
    Io(#[from] std::io::Error),
    /// Not a valid plugin name.
    #[error("invalid plugin name {0:?}")]
    InvalidPluginName(String),
}
