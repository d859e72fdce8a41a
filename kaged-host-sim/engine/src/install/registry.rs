//! The store's record of installed plugins: the `[plugins.<name>]` tables
//! of `config.toml` at the store root, as the daemon keeps them (spec
//! Install flow step 7: `installed = "<version>"`, `local = true|false`;
//! Spawn step 1 reads the enabled list from it), with what the simulator
//! adds: `enabled`, `source`, the consented `capabilities` and the
//! `manifest_sha256` consented to. Every other key of the file is kept as
//! it is.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::InstallError;

/// The store's config file.
pub const CONFIG_FILE: &str = "config.toml";

/// One installed plugin, as the local config records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalledPlugin {
    /// The plugin's manifest name (the table's key in the file).
    pub name: String,
    /// `installed = "<version>"`.
    pub installed: String,
    /// `local = true` for a manual install; `false` for a project-driven one
    /// (activated only for the declaring project: [`projects`](Self::projects)).
    pub local: bool,
    /// The ids of the projects whose load installed it (`local = false`):
    /// the only projects it activates for. Empty for a manual install.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub projects: Vec<String>,
    /// Where it was installed from, as the operator gave it.
    pub source: String,
    /// Installed plugins stay disabled until the operator enables them.
    pub enabled: bool,
    /// The capabilities the operator consented to (at install, upgrade or
    /// `plugin consent`): every start is checked against them.
    pub capabilities: Vec<String>,
    /// The SHA-256 of the manifest consented to (hex), `manifest_sha256`
    /// in the file; `None` in an entry written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_sha256: Option<String>,
}

impl InstalledPlugin {
    /// Whether it activates for the project `project` (its id; `None`
    /// when the daemon runs without one): a manual install always, a
    /// project-driven one (`local = false`) only for a declaring project.
    pub fn activates_for(&self, project: Option<&str>) -> bool {
        self.local || project.is_some_and(|id| self.projects.iter().any(|p| p == id))
    }
}

/// The registry file and its entries, keyed by plugin name.
#[derive(Debug)]
pub(crate) struct Registry {
    path: PathBuf,
    /// The file's other keys, written back unchanged.
    rest: toml::Table,
    pub(crate) plugins: BTreeMap<String, InstalledPlugin>,
}

impl Registry {
    /// The registry of the store at `root` (empty when the file is absent).
    pub(crate) fn load(root: &Path) -> Result<Registry, InstallError> {
        let path = root.join(CONFIG_FILE);
        let bad = |message: String| InstallError::Registry {
            path: path.clone(),
            message,
        };
        let mut rest: toml::Table = match std::fs::read_to_string(&path) {
            Ok(text) => text
                .parse()
                .map_err(|e: toml::de::Error| bad(e.to_string()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => toml::Table::new(),
            Err(source) => return Err(InstallError::Io { path, source }),
        };
        let tables: BTreeMap<String, toml::Table> = match rest.remove("plugins") {
            None => BTreeMap::new(),
            Some(table) => table
                .try_into()
                .map_err(|e: toml::de::Error| bad(format!("[plugins]: {e}")))?,
        };
        let mut plugins = BTreeMap::new();
        for (name, mut table) in tables {
            table.insert("name".into(), toml::Value::String(name.clone()));
            let entry: InstalledPlugin = table
                .try_into()
                .map_err(|e: toml::de::Error| bad(format!("[plugins.{name}]: {e}")))?;
            plugins.insert(name, entry);
        }
        Ok(Registry {
            path,
            rest,
            plugins,
        })
    }

    /// Write the registry atomically (a temporary file renamed over it).
    pub(crate) fn save(&self) -> Result<(), InstallError> {
        let bad = |message: String| InstallError::Registry {
            path: self.path.clone(),
            message,
        };
        let mut doc = self.rest.clone();
        let mut plugins = toml::Table::new();
        for (name, entry) in &self.plugins {
            let mut table = toml::Table::try_from(entry).map_err(|e| bad(e.to_string()))?;
            // The key is the name.
            table.remove("name");
            plugins.insert(name.clone(), toml::Value::Table(table));
        }
        doc.insert("plugins".into(), toml::Value::Table(plugins));
        let text = toml::to_string_pretty(&doc).map_err(|e| bad(e.to_string()))?;
        let tmp = self.path.with_extension("toml.tmp");
        std::fs::write(&tmp, text).map_err(InstallError::io_at(&tmp))?;
        std::fs::rename(&tmp, &self.path).map_err(InstallError::io_at(&self.path))
    }
}

/// The store's root and entry of `dir` when `dir` is an installed copy
/// (`<store>/plugins/<name>/` of a store whose `config.toml` lists
/// `<name>`); `None` for any other directory.
pub fn installed_copy(dir: &Path) -> Result<Option<(PathBuf, InstalledPlugin)>, InstallError> {
    let Ok(dir) = dir.canonicalize() else {
        return Ok(None);
    };
    let (Some(name), Some(plugins)) = (dir.file_name(), dir.parent()) else {
        return Ok(None);
    };
    let Some(root) = plugins.parent().filter(|_| plugins.ends_with("plugins")) else {
        return Ok(None);
    };
    if !root.join(CONFIG_FILE).is_file() {
        return Ok(None);
    }
    let entry = Registry::load(root)?
        .plugins
        .remove(&name.to_string_lossy().into_owned());
    Ok(entry.map(|e| (root.to_path_buf(), e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_other_keys_are_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "memory_mb = 512\n\n[plugins.echo]\ninstalled = \"0.1.0\"\nlocal = true\n\
             source = \"/src/echo\"\nenabled = false\ncapabilities = []\n",
        )
        .expect("write");
        let mut reg = Registry::load(dir.path()).expect("load");
        assert_eq!(reg.plugins["echo"].name, "echo");
        assert_eq!(reg.rest.get("memory_mb"), Some(&toml::Value::Integer(512)));
        reg.plugins.get_mut("echo").expect("echo").enabled = true;
        reg.save().expect("save");
        let text = std::fs::read_to_string(dir.path().join(CONFIG_FILE)).expect("read");
        assert!(text.contains("memory_mb = 512"), "{text}");
        assert!(
            text.contains("[plugins.echo]") && text.contains("enabled = true"),
            "{text}"
        );
        let again = Registry::load(dir.path()).expect("load");
        assert_eq!(again.plugins, reg.plugins);
    }

    #[test]
    fn the_store_guard_protects_the_record_and_its_temporary_twin() {
        let owned = crate::STORE_OWNED;
        assert!(owned.contains(&CONFIG_FILE) && owned.contains(&"config.toml.tmp"));
        let tmp = Path::new(CONFIG_FILE).with_extension("toml.tmp");
        assert_eq!(
            tmp,
            Path::new("config.toml.tmp"),
            "what save() writes first"
        );
    }

    #[test]
    fn a_malformed_file_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(CONFIG_FILE), "[plugins.echo]\nlocal = 3\n").expect("w");
        let err = Registry::load(dir.path()).expect_err("refused").to_string();
        assert!(
            err.contains("config.toml") && err.contains("[plugins.echo]"),
            "{err}"
        );
    }
}
