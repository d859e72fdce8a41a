//! The plugin's state and config.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::catalogue::Catalogue;

/// The default preset directory (covered by the manifest's
/// `read:fs:/opt/oh-my-pi`).
pub const DEFAULT_PRESET_DIR: &str = "/opt/oh-my-pi/presets";

fn default_preset_dir() -> String {
    DEFAULT_PRESET_DIR.to_owned()
}

/// The plugin's config (`config.update`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The directory preset files (`<name>.yaml`, `.yml` or `.json`) are
    /// read from: an absolute path the plugin is allowed to read (the
    /// manifest grants `read:fs:/opt/oh-my-pi`; an operator who moves the
    /// presets grants that path instead).
    #[serde(default = "default_preset_dir")]
    #[schemars(regex(pattern = r"^/"))]
    pub preset_dir: String,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            preset_dir: default_preset_dir(),
        }
    }
}

impl Config {
    /// Why this config cannot be used, if it cannot.
    pub fn problem(&self) -> Option<String> {
        if !std::path::Path::new(&self.preset_dir).is_absolute() {
            return Some(format!(
                "preset_dir {:?} must be an absolute path",
                self.preset_dir
            ));
        }
        None
    }
}

/// The oh-my-pi plugin: a preset catalogue on brokered storage.
#[derive(Debug, Default)]
pub struct OhMyPi {
    pub(crate) config: RwLock<Arc<Config>>,
    pub(crate) catalogue: Catalogue,
    /// Installs and uninstalls one at a time, so that a change, its
    /// revision and its notification go together.
    pub(crate) writes: tokio::sync::Mutex<()>,
}

impl OhMyPi {
    /// The current config.
    pub fn config(&self) -> Arc<Config> {
        Arc::clone(&self.config.read().unwrap_or_else(|p| p.into_inner()))
    }

    pub(crate) fn set_config(&self, config: Config) {
        *self.config.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(config);
    }

    /// The preset directory.
    pub fn preset_dir(&self) -> PathBuf {
        PathBuf::from(&self.config().preset_dir)
    }
}
