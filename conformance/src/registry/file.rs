//! The registry file: which plugins a registry certifies, at which
//! version, from where, under which policy.
//!
//! ```yaml
//! registry: 1
//! policy: policies/registry.yaml     # the default policy (optional)
//! plugins:
//!   - name: py-notes
//!     version: 0.1.0
//!     source: {dir: plugins/py-notes}          # a directory beside the file
//!   - name: node-notes
//!     version: 0.1.0
//!     source: {git: https://github.com/acme/node-notes, ref: v0.1.0}
//!     policy: policies/strict.yaml    # this plugin's own (optional)
//! ```
//!
//! Paths are relative to the registry file's directory. A plugin's
//! `(name, version)` is unique; `name` is a plugin name
//! (`^[a-z][a-z0-9-]*$`).

use std::path::{Path, PathBuf};

use kaged_plugin_protocol::manifest::from_yaml_str;
use serde::Deserialize;

/// Why a registry file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The file cannot be read.
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// It is not a registry this kit reads.
    #[error("{path} is not a valid registry: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    registry: u32,
    #[serde(default)]
    policy: Option<String>,
    plugins: Vec<EntryFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryFile {
    name: String,
    version: String,
    source: SourceFile,
    #[serde(default)]
    policy: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceFile {
    #[serde(default)]
    dir: Option<String>,
    #[serde(default)]
    git: Option<String>,
    #[serde(default, rename = "ref")]
    git_ref: Option<String>,
}

/// Where a plugin of the registry comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A directory, relative to the registry file.
    Dir(String),
    /// A git repository at a ref (a tag, a branch; `None`: its default
    /// branch).
    Git {
        /// What `git clone` is given.
        url: String,
        /// The ref to check out.
        git_ref: Option<String>,
    },
}

/// One plugin of the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The plugin's name.
    pub name: String,
    /// The version certified.
    pub version: String,
    /// Where it comes from.
    pub source: Source,
    /// Its policy file (its own, else the registry's), relative to the
    /// registry file.
    pub policy: Option<String>,
}

impl Entry {
    /// `name-version`: the plugin's key in the matrix and the merged page.
    pub fn key(&self) -> String {
        format!("{}-{}", self.name, self.version)
    }
}

/// A registry file, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registry {
    /// The file's directory (what its paths are relative to).
    pub base: PathBuf,
    /// Its plugins, in file order.
    pub plugins: Vec<Entry>,
}

impl Registry {
    /// Read and check the registry at `path`.
    pub fn load(path: &Path) -> Result<Registry, RegistryError> {
        let text = std::fs::read_to_string(path).map_err(|source| RegistryError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Registry::from_yaml(&text, &base).map_err(|message| RegistryError::Invalid {
            path: path.display().to_string(),
            message,
        })
    }

    /// Parse and check registry YAML whose paths are relative to `base`.
    pub fn from_yaml(text: &str, base: &Path) -> Result<Registry, String> {
        let file: File = from_yaml_str(text).map_err(|e| e.to_string())?;
        if file.registry != 1 {
            return Err(format!(
                "`registry: {}`: this kit reads registry: 1",
                file.registry
            ));
        }
        if file.plugins.is_empty() {
            return Err("`plugins` is empty".into());
        }
        let mut plugins: Vec<Entry> = Vec::new();
        for (i, e) in file.plugins.into_iter().enumerate() {
            let at = format!("plugins[{i}] ({})", e.name);
            if !kaged_plugin_protocol::names::is_plugin_name(&e.name) {
                return Err(format!(
                    "{at}: `{}` is not a plugin name (^[a-z][a-z0-9-]*$)",
                    e.name
                ));
            }
            if e.version.trim().is_empty() {
                return Err(format!("{at}: `version` is empty"));
            }
            let source = match (e.source.dir, e.source.git, e.source.git_ref) {
                (Some(dir), None, None) => {
                    if Path::new(&dir)
                        .components()
                        .any(|c| c == std::path::Component::ParentDir)
                    {
                        return Err(format!(
                            "{at}: source dir `{dir}` leaves the registry's directory"
                        ));
                    }
                    Source::Dir(dir)
                }
                (None, Some(url), git_ref) => Source::Git { url, git_ref },
                (Some(_), None, Some(_)) => {
                    return Err(format!("{at}: `ref` goes with `git`, not `dir`"))
                }
                (Some(_), Some(_), _) => {
                    return Err(format!("{at}: source has both `dir` and `git`"))
                }
                (None, None, _) => return Err(format!("{at}: source needs `dir` or `git`")),
            };
            let entry = Entry {
                name: e.name,
                version: e.version,
                source,
                policy: e.policy.or_else(|| file.policy.clone()),
            };
            if plugins.iter().any(|p| p.key() == entry.key()) {
                return Err(format!(
                    "{at}: {} {} is listed twice",
                    entry.name, entry.version
                ));
            }
            plugins.push(entry);
        }
        Ok(Registry {
            base: base.to_path_buf(),
            plugins,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_reads_and_its_mistakes_are_named() {
        let ok = "registry: 1\npolicy: p.yaml\nplugins:\n  - name: a\n    version: 1.0.0\n    source: {dir: plugins/a}\n  - name: b\n    version: 2.0.0\n    source: {git: https://example.com/b.git, ref: v2.0.0}\n    policy: strict.yaml\n";
        let r = Registry::from_yaml(ok, Path::new("/r")).expect("valid");
        assert_eq!(r.plugins[0].policy.as_deref(), Some("p.yaml"));
        assert_eq!(r.plugins[1].policy.as_deref(), Some("strict.yaml"));
        assert_eq!(
            r.plugins[1].source,
            Source::Git {
                url: "https://example.com/b.git".into(),
                git_ref: Some("v2.0.0".into())
            }
        );
        for (bad, says) in [
            ("registry: 2\nplugins: []\n", "registry: 1"),
            ("registry: 1\nplugins: []\n", "empty"),
            ("registry: 1\nplugins:\n  - name: A\n    version: 1\n    source: {dir: a}\n", "not a plugin name"),
            ("registry: 1\nplugins:\n  - name: a\n    version: 1\n    source: {dir: ../a}\n", "leaves"),
            ("registry: 1\nplugins:\n  - name: a\n    version: 1\n    source: {}\n", "needs `dir` or `git`"),
            ("registry: 1\nplugins:\n  - name: a\n    version: 1\n    source: {dir: a}\n  - name: a\n    version: 1\n    source: {dir: b}\n", "listed twice"),
            ("registry: 1\nplugin: []\n", "unknown field"),
            ("registry: 1\nplugins: [\n", "line 2 column 10: unclosed bracket"),
        ] {
            let e = Registry::from_yaml(bad, Path::new("/r")).expect_err(bad);
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }
}
