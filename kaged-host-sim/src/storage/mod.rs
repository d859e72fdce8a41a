//! Brokered plugin storage (docs to come).

mod authorizer;
mod broker;
mod cache;
mod exec;
mod redact;
pub mod rewrite;
mod values;

pub use authorizer::{install as install_authorizer, AuthPolicy, Owners, Phase};
pub use broker::{StorageBroker, StorageClient, StorageDenial, StorageError, CAP_READ, CAP_WRITE};
pub use cache::RewriteCache;
pub use exec::{unprefix, MAX_RESULT_BYTES};
pub use redact::{redact_sql, MAX_REDACTED_LEN};
pub use rewrite::{rewrite, RewriteError, Rewritten, StatementKind};
pub use values::{base64, parse_params, to_json, ParsedParams, BLOB_KEY};

/// The storage prefix of a plugin: `plugin_<name with - replaced by _>_`.
pub fn storage_prefix(plugin_name: &str) -> String {
    format!("plugin_{}_", plugin_name.replace('-', "_"))
}
