//! The store's record of installed plugins: `plugins.json` at the store
//! root, standing in for the daemon's `local.toml` `[plugins.<name>]`
//! entries (`installed = "<version>"`, `local = true|false`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::InstallError;

/// One installed plugin, as the local config records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalledPlugin {
    /// The plugin's manifest name.
    pub name: String,
    /// `installed = "<version>"`.
    pub installed: String,
    /// `local = true` for a manual install; `false` for a project-driven one
    /// (activated only for the declaring project).
    pub local: bool,
    /// Where it was installed from, as the operator gave it.
    pub source: String,
    /// Installed plugins stay disabled until the operator enables them.
    pub enabled: bool,
    /// The capabilities the operator consented to.
    pub capabilities: Vec<String>,
}

/// The registry file and its entries, keyed by plugin name.
#[derive(Debug)]
pub(crate) struct Registry {
    path: PathBuf,
    pub(crate) plugins: BTreeMap<String, InstalledPlugin>,
}

impl Registry {
    /// The registry of the store at `root` (empty when the file is absent).
    pub(crate) fn load(root: &Path) -> Result<Registry, InstallError> {
        let path = root.join("plugins.json");
        let plugins = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| InstallError::Registry {
                path: path.clone(),
                message: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(source) => return Err(InstallError::Io { path, source }),
        };
        Ok(Registry { path, plugins })
    }

    /// Write the registry atomically (a temporary file renamed over it).
    pub(crate) fn save(&self) -> Result<(), InstallError> {
        let text =
            serde_json::to_string_pretty(&self.plugins).map_err(|e| InstallError::Registry {
                path: self.path.clone(),
                message: e.to_string(),
            })?;
        let tmp = self.path.with_extension("json.tmp");
        std::fs::write(&tmp, text + "\n").map_err(InstallError::io_at(&tmp))?;
        std::fs::rename(&tmp, &self.path).map_err(InstallError::io_at(&self.path))
    }
}
