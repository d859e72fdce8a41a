//! Where plugins come from (a directory of plugin directories, or an
//! explicit package → directory map) and launching each one once.
//!
//! A plugin that fails to launch does not block the others (spec Spawn:
//! "Failed plugins do not block daemon startup"): it is recorded as a
//! [`FailedPlugin`] and audited `plugin.failed {reason: "launch failed",
//! package, error}`, except after a spawn failure, which the launch itself
//! already audits as `plugin.failed {reason: "spawn failed"}`. Either way the
//! launch's own events (`plugin.disabled` for an invalid manifest,
//! `plugin.crashed`, a handshake row and `plugin.killed`) come first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kaged_plugin_protocol::error_chain;
use kaged_plugin_protocol::manifest::{Manifest, ManifestError, MANIFEST_FILE};
use serde_json::{json, Map, Value};

use super::AgentHostError;
use crate::agents::{ActivePlugin, Catalogue, Resolution};
use kaged_host_core::audit::AuditEvent;
use kaged_host_core::{FirstConfig, PluginHandle};
use kaged_host_core::{HostSim, LaunchError};

/// The plugin directories a project's packages map to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginDirs {
    /// Every subdirectory holding a `kaged-plugin.yaml`, registered under its
    /// manifest name: answers to `@scope/<name>` and `<name>` (see
    /// [`crate::agents::catalogue`]).
    Root(PathBuf),
    /// Explicit package → plugin directory entries.
    Map(BTreeMap<String, PathBuf>),
}

/// One directory with its manifest and the package key it was registered under.
#[derive(Debug)]
pub(super) struct Found {
    pub(super) catalogue: Catalogue,
    /// (package key or manifest name, manifest name, directory).
    dirs: Vec<(String, String, PathBuf)>,
}

/// One launched plugin process.
#[derive(Debug)]
pub(super) struct Running {
    pub(super) dir: PathBuf,
    /// The declared packages this process serves.
    packages: Vec<String>,
    pub(super) plugin: PluginHandle,
    /// The config of the first agent declaring the plugin (primary first).
    pub(super) first_config: Map<String, Value>,
    /// Held across `config.update` + hook; holds the last config sent
    /// (the first is sent at launch: ADDENDUM §15).
    pub(super) gate: tokio::sync::Mutex<Option<Map<String, Value>>>,
}

fn load_manifest(dir: &Path) -> Result<Manifest, AgentHostError> {
    Manifest::load_dir(dir).map_err(|source| AgentHostError::PluginDir {
        path: dir.to_path_buf(),
        source,
    })
}

/// A plugin of the project that could not be launched: it stays in the
/// resolution, but has no process, so its hooks are not fired (a designated
/// compactor that failed makes compaction fall back to drop).
#[derive(Debug)]
pub struct FailedPlugin {
    /// The plugin's (manifest) name.
    pub name: String,
    /// The declared packages it would have served, in launch order.
    pub packages: Vec<String>,
    /// Its directory.
    pub dir: PathBuf,
    /// Why it could not be launched.
    pub error: LaunchError,
}

/// Every active plugin, launched or failed.
#[derive(Debug, Default)]
pub(super) struct Launched {
    pub(super) running: Vec<Running>,
    pub(super) failed: Vec<FailedPlugin>,
}

/// Read the manifests of `dirs` into a catalogue.
pub(super) fn load(dirs: &PluginDirs) -> Result<Found, AgentHostError> {
    let mut found = Found {
        catalogue: Catalogue::new(),
        dirs: Vec::new(),
    };
    match dirs {
        PluginDirs::Root(root) => {
            let entries = std::fs::read_dir(root).map_err(|source| AgentHostError::PluginDir {
                path: root.clone(),
                source: ManifestError::Io {
                    path: root.clone(),
                    source,
                },
            })?;
            let mut subdirs: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.join(MANIFEST_FILE).is_file())
                .collect();
            subdirs.sort();
            for d in subdirs {
                let m = load_manifest(&d)?;
                found.dirs.push((m.name.clone(), m.name.clone(), d));
                found.catalogue.insert_manifest(m);
            }
        }
        PluginDirs::Map(map) => {
            for (package, d) in map {
                let m = load_manifest(d)?;
                found
                    .dirs
                    .push((package.clone(), m.name.clone(), d.clone()));
                found.catalogue.insert(package.clone(), m);
            }
        }
    }
    Ok(found)
}

impl Found {
    /// The directory of an active plugin: the entry registered under its
    /// exact package, else the first whose manifest name is its name.
    fn dir_of(&self, p: &ActivePlugin) -> Option<&Path> {
        self.dirs
            .iter()
            .find(|(key, _, _)| *key == p.package)
            .or_else(|| self.dirs.iter().find(|(_, name, _)| *name == p.name))
            .map(|(_, _, d)| d.as_path())
    }
}

/// Launch every active plugin once (one process per directory), in
/// resolution order; one that fails is recorded and audited (see the module
/// docs) and the others still start. Only a plugin without a directory
/// stops everything (the plugins already started are shut down).
pub(super) async fn launch_all(
    host: &HostSim,
    resolution: &Resolution,
    found: &Found,
) -> Result<Launched, AgentHostError> {
    let mut out = Launched::default();
    for agent in &resolution.agents {
        for p in &agent.plugins {
            let Some(dir) = found.dir_of(p) else {
                for r in &out.running {
                    r.plugin.shutdown().await;
                }
                return Err(AgentHostError::NoPluginDir {
                    package: p.package.clone(),
                    name: p.name.clone(),
                });
            };
            if let Some(r) = out.running.iter_mut().find(|r| r.dir == dir) {
                add_package(&mut r.packages, &p.package);
                continue;
            }
            if let Some(f) = out.failed.iter_mut().find(|f| f.dir == dir) {
                add_package(&mut f.packages, &p.package);
                continue;
            }
            // The first declaring agent's config goes right after
            // `initialized` (ADDENDUM §12, §15), before any hook.
            let first = FirstConfig::Given(p.config.clone());
            match host.launch_with(dir, &first).await {
                Ok(plugin) => {
                    let sent = plugin.first_config().map(|s| s.config);
                    out.running.push(Running {
                        dir: dir.to_path_buf(),
                        packages: vec![p.package.clone()],
                        plugin,
                        first_config: p.config.clone(),
                        gate: tokio::sync::Mutex::new(sent),
                    })
                }
                Err(error) => {
                    tracing::warn!(plugin = %p.name, package = %p.package, error = %error_chain::chain(&error), "plugin failed to launch; starting the others");
                    if !matches!(error, LaunchError::Spawn { .. }) {
                        host.audit().emit(
                            AuditEvent::Failed,
                            &p.name,
                            json!({"reason": "launch failed", "package": p.package,
                                   "error": error_chain::chain(&error)}),
                        );
                    }
                    out.failed.push(FailedPlugin {
                        name: p.name.clone(),
                        packages: vec![p.package.clone()],
                        dir: dir.to_path_buf(),
                        error,
                    });
                }
            }
        }
    }
    Ok(out)
}

fn add_package(packages: &mut Vec<String>, package: &str) {
    if !packages.iter().any(|p| p == package) {
        packages.push(package.to_string());
    }
}

/// The running process of an active plugin.
pub(super) fn find<'a>(running: &'a [Running], p: &ActivePlugin) -> Option<&'a Running> {
    running.iter().find(|r| r.packages.contains(&p.package))
}
