//! The methods' params and answers, the `catalog.updated` notification and
//! the plugin's errors (`-32602` for bad params, `-32000` with
//! `data.error` naming the failure otherwise).

use kaged_plugin_sdk::PluginError;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::catalogue::{HistoryEntry, Installed};
use crate::preset::PresetSpec;
use crate::source::Problem;

/// The notification sent when the catalogue changes.
pub const CATALOG_UPDATED: &str = "catalog.updated";
/// `presets.search`'s default `limit`.
pub const DEFAULT_LIMIT: u32 = 20;
/// The largest `limit`.
pub const MAX_LIMIT: u32 = 100;
/// How many history entries `preset.get` shows by default.
pub const DEFAULT_HISTORY: u32 = 10;

/// `presets.list` params.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// Only presets whose name contains this.
    #[serde(default)]
    pub filter: Option<String>,
    /// Only presets carrying this tag.
    #[serde(default)]
    pub tag: Option<String>,
    /// Also scan the preset directory: list what could be installed and
    /// flag installed presets with a newer file.
    #[serde(default)]
    pub available: bool,
}

/// An installed preset in `presets.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Listed {
    /// The installed preset.
    #[serde(flatten)]
    pub preset: Installed,
    /// A newer version in the preset directory (with `available: true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_available: Option<String>,
}

/// A preset file in the preset directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Available {
    /// Its name.
    pub name: String,
    /// The file's version.
    pub version: String,
    /// Its description.
    pub description: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// The file.
    pub path: String,
    /// The installed version, when installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed_version: Option<String>,
}

/// `presets.list` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListAnswer {
    /// Installed presets, by name.
    pub presets: Vec<Listed>,
    /// The catalogue revision (changes ever made).
    pub revision: i64,
    /// With `available: true`: the preset directory's presets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<Vec<Available>>,
    /// Preset files (or the directory) that could not be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Problem>,
}

/// `presets.search` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// Words to look for in names, tags and descriptions.
    pub query: String,
    /// At most this many results (1-100, default 20).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Search only the installed catalogue, not the preset directory.
    #[serde(default)]
    pub installed_only: bool,
}

/// One `presets.search` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    /// The preset's name.
    pub name: String,
    /// The installed version, else the file's.
    pub version: String,
    /// Its description.
    pub description: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// Whether it is installed.
    pub installed: bool,
    /// The preset file's version, when there is a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_version: Option<String>,
    /// The preset file, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The ranking score (higher is better).
    pub score: f64,
}

/// `presets.search` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchAnswer {
    /// Best first.
    pub results: Vec<Hit>,
    /// Preset files (or the directory) that could not be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Problem>,
}

/// `preset.install` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstallParams {
    /// The preset to install.
    pub name: String,
    /// An inline definition; without it the preset is read from the
    /// preset directory.
    #[serde(default)]
    pub preset: Option<PresetSpec>,
    /// Allow replacing an installed preset with an older version.
    #[serde(default)]
    pub allow_downgrade: bool,
}

/// `preset.install` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstallAnswer {
    /// Always `true`.
    pub installed: bool,
    /// `installed`, `updated` or `unchanged` (same definition: nothing
    /// written, no notification).
    pub action: String,
    /// The preset as now installed.
    pub preset: Installed,
    /// The version it replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_version: Option<String>,
    /// The catalogue revision.
    pub revision: i64,
}

/// `preset.uninstall` and `preset.get` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NameParams {
    /// The preset.
    pub name: String,
    /// `preset.get`: how many history entries to show (default 10, at most 100).
    #[serde(default)]
    pub history: Option<u32>,
}

/// `preset.uninstall` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UninstallAnswer {
    /// Always `true`.
    pub uninstalled: bool,
    /// The preset.
    pub name: String,
    /// The version removed.
    pub version: String,
    /// The catalogue revision.
    pub revision: i64,
}

/// `preset.get` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetAnswer {
    /// The installed preset.
    pub preset: Installed,
    /// What it applies to an agent.
    pub settings: Map<String, Value>,
    /// Its installs, updates and uninstalls, newest first.
    pub history: Vec<HistoryEntry>,
}

/// `catalog.updated` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogUpdated {
    /// The method that changed the catalogue.
    pub source: String,
    /// `installed`, `updated` or `uninstalled`.
    pub action: String,
    /// The preset.
    pub name: String,
    /// Its version (installed, or removed).
    pub version: String,
    /// Presets added (0 or 1).
    pub entries_added: u32,
    /// Presets replaced (0 or 1).
    pub entries_updated: u32,
    /// Presets removed (0 or 1).
    pub entries_removed: u32,
    /// The catalogue revision after the change.
    pub revision: i64,
    /// Presets installed after the change.
    pub total: i64,
}

/// `-32602` naming the field.
pub fn invalid(field: &str, message: impl std::fmt::Display) -> PluginError {
    PluginError::invalid_params(format!("invalid params: field /{field}: {message}"))
}

/// `-32000` whose message starts with `kind` and whose `data.error` is
/// `kind`, plus `details`.
pub fn failure(kind: &str, message: impl std::fmt::Display, details: Value) -> PluginError {
    let mut data = json!({ "error": kind });
    if let (Some(d), Value::Object(extra)) = (data.as_object_mut(), details) {
        d.extend(extra);
    }
    PluginError::new(format!("{kind}: {message}")).with_data(data)
}

/// `preset_not_installed` for `name`.
pub fn not_installed(name: &str) -> PluginError {
    failure(
        "preset_not_installed",
        format!("no installed preset is named {name:?}"),
        json!({ "name": name }),
    )
}
