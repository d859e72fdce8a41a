//! Where plugins come from (a directory of plugin directories, or an
//! explicit package → directory map) and launching each one once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kaged_plugin_protocol::manifest::{Manifest, ManifestError, MANIFEST_FILE};
use serde_json::{Map, Value};

use super::AgentHostError;
use crate::agents::{ActivePlugin, Catalogue, Resolution};
use crate::host::HostSim;
use crate::plugin::session::PluginSession;

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
    pub(super) session: PluginSession,
    /// The config of the first agent declaring the plugin (primary first).
    pub(super) first_config: Map<String, Value>,
    /// Held across `config.update` + hook; holds the last config sent.
    pub(super) gate: tokio::sync::Mutex<Map<String, Value>>,
}

fn load_manifest(dir: &Path) -> Result<Manifest, AgentHostError> {
    Manifest::load_dir(dir).map_err(|source| AgentHostError::PluginDir {
        path: dir.to_path_buf(),
        source,
    })
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
/// resolution order. On failure the plugins already started are shut down.
pub(super) async fn launch_all(
    host: &HostSim,
    resolution: &Resolution,
    found: &Found,
) -> Result<Vec<Running>, AgentHostError> {
    let mut running: Vec<Running> = Vec::new();
    for agent in &resolution.agents {
        for p in &agent.plugins {
            let r = match found.dir_of(p) {
                Some(dir) if running.iter().any(|r| r.dir == dir) => {
                    for r in running.iter_mut().filter(|r| r.dir == dir) {
                        if !r.packages.contains(&p.package) {
                            r.packages.push(p.package.clone());
                        }
                    }
                    continue;
                }
                Some(dir) => host.launch(dir).await.map(|s| (dir, s)).map_err(|source| {
                    AgentHostError::Launch {
                        package: p.package.clone(),
                        source: Box::new(source),
                    }
                }),
                None => Err(AgentHostError::NoPluginDir {
                    package: p.package.clone(),
                    name: p.name.clone(),
                }),
            };
            match r {
                Ok((dir, session)) => running.push(Running {
                    dir: dir.to_path_buf(),
                    packages: vec![p.package.clone()],
                    session,
                    first_config: p.config.clone(),
                    gate: tokio::sync::Mutex::new(Map::new()),
                }),
                Err(e) => {
                    for r in &running {
                        r.session.shutdown().await;
                    }
                    return Err(e);
                }
            }
        }
    }
    Ok(running)
}

/// The running process of an active plugin.
pub(super) fn find<'a>(running: &'a [Running], p: &ActivePlugin) -> Option<&'a Running> {
    running.iter().find(|r| r.packages.contains(&p.package))
}
