//! The catalogue of loaded plugins a project is resolved against.
//!
//! A declaration's `package` maps to a plugin in this order:
//!
//! 1. an entry inserted under exactly that package string
//!    ([`Catalogue::insert`]);
//! 2. otherwise the first entry whose manifest `name` equals the package
//!    string, or its last segment without the scope (`@kaged/memory-markdown`
//!    → `memory-markdown`).
//!
//! So a catalogue built from plugin directories ([`Catalogue::insert_manifest`],
//! keyed by manifest name) answers to `@kaged/<name>` and to `<name>`, while
//! an explicit package key wins when two scopes ship the same name.

use std::path::Path;

use kaged_plugin_protocol::manifest::{Manifest, ManifestError};

/// Plugins by package name.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    entries: Vec<(String, Manifest)>,
}

impl Catalogue {
    /// An empty catalogue.
    pub fn new() -> Catalogue {
        Catalogue::default()
    }

    /// Register `manifest` under `package` (replacing a previous entry).
    pub fn insert(&mut self, package: impl Into<String>, manifest: Manifest) {
        let package = package.into();
        self.entries.retain(|(p, _)| *p != package);
        self.entries.push((package, manifest));
    }

    /// Register `manifest` under its own name.
    pub fn insert_manifest(&mut self, manifest: Manifest) {
        self.insert(manifest.name.clone(), manifest);
    }

    /// Register the manifest of every subdirectory of `dir` holding a
    /// `kaged-plugin.yaml`, under its manifest name, in file-name order.
    pub fn load_dir(dir: &Path) -> Result<Catalogue, ManifestError> {
        let io = |source| ManifestError::Io {
            path: dir.to_path_buf(),
            source,
        };
        let mut dirs: Vec<_> = std::fs::read_dir(dir)
            .map_err(io)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.join(kaged_plugin_protocol::manifest::MANIFEST_FILE)
                    .is_file()
            })
            .collect();
        dirs.sort();
        let mut catalogue = Catalogue::new();
        for d in dirs {
            catalogue.insert_manifest(Manifest::load_dir(&d)?);
        }
        Ok(catalogue)
    }

    /// The plugin a declared `package` maps to (see the module docs).
    pub fn get(&self, package: &str) -> Option<&Manifest> {
        if let Some((_, m)) = self.entries.iter().find(|(p, _)| p == package) {
            return Some(m);
        }
        let short = package_short_name(package);
        self.entries
            .iter()
            .find(|(_, m)| m.name == package || m.name == short)
            .map(|(_, m)| m)
    }
}

/// The last segment of a package string, without the `@scope/` prefix.
pub fn package_short_name(package: &str) -> &str {
    package.rsplit('/').next().unwrap_or(package)
}
