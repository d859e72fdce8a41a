//! Which plugins the daemon starts (spec Spawn step 1).

use std::path::{Path, PathBuf};

use super::error::DaemonError;
use kaged_host_core::audit::AuditLog;
use kaged_host_engine::PluginStore;

/// Where the enabled-plugins list comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// A plugin store (`plugin install` / `plugin enable`): its enabled
    /// plugins.
    Store(PathBuf),
    /// A directory of plugin directories: every one holding a
    /// `kaged-plugin.yaml`.
    Plugins(PathBuf),
}

/// The plugin directories to start for the project `project` (its id;
/// `None` without one), sorted by path: a store's enabled plugins that
/// activate for it (a project-driven install, `local = false`, only for a
/// project that declared it: [`InstalledPlugin::activates_for`]); every
/// plugin of a `--plugins` directory.
///
/// [`InstalledPlugin::activates_for`]: kaged_host_engine::InstalledPlugin::activates_for
pub fn discover(source: &PluginSource, project: Option<&str>) -> Result<Vec<PathBuf>, DaemonError> {
    match source {
        PluginSource::Store(root) => store_dirs(root, project),
        PluginSource::Plugins(dir) => plugin_dirs(dir),
    }
}

fn store_dirs(root: &Path, project: Option<&str>) -> Result<Vec<PathBuf>, DaemonError> {
    let err = |source| DaemonError::Store {
        root: root.to_path_buf(),
        source,
    };
    let store = PluginStore::open(root, AuditLog::discard()).map_err(err)?;
    let mut dirs: Vec<PathBuf> = store
        .list()
        .map_err(err)?
        .into_iter()
        .filter(|p| p.enabled && p.activates_for(project))
        .map(|p| store.plugin_dir(&p.name))
        .collect();
    dirs.sort();
    Ok(dirs)
}

fn plugin_dirs(dir: &Path) -> Result<Vec<PathBuf>, DaemonError> {
    let err = |source| DaemonError::PluginsDir {
        dir: dir.to_path_buf(),
        source,
    };
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(err)? {
        let path = entry.map_err(err)?.path();
        if path.join("kaged-plugin.yaml").is_file() {
            dirs.push(path);
        }
    }
    dirs.sort();
    Ok(dirs)
}
