//! The `initialize` / `initialized` handshake.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The plugin API version this crate speaks.
pub const API_VERSION: u32 = 1;

/// `initialize` params (daemon to plugin).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InitializeParams {
    /// The daemon's semantic version. Informational.
    pub daemon_version: String,
    /// The plugin API version the daemon speaks (currently 1).
    pub api_version: u32,
    /// The plugin's name as declared in the manifest.
    pub plugin_name: String,
    /// Whether the daemon has storage ready for this plugin.
    pub storage_available: bool,
    /// Project slugs that have activated this plugin.
    #[serde(default)]
    pub projects: Vec<String>,
}

/// `initialize` result (plugin to daemon).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InitializeResult {
    /// Must match the manifest's `name`.
    pub name: String,
    /// Must match the manifest's `version`.
    pub version: String,
    /// Must equal the daemon's `api_version`.
    pub api_version: u32,
    /// Custom methods plus prefixed tool names (ADDENDUM §1).
    #[serde(default)]
    pub methods: Vec<String>,
    /// Notification types the plugin may emit.
    #[serde(default)]
    pub notifications: Vec<String>,
    /// Capabilities the plugin reports using (a subset of the manifest's).
    #[serde(default)]
    pub capabilities_used: Vec<String>,
}

/// `initialized` params: an empty object.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct InitializedParams {
    /// Members a future daemon may add; kept untouched.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
