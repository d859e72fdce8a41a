//! Loading a manifest from YAML.

use std::path::{Path, PathBuf};

use super::Manifest;

/// The manifest's file name inside a plugin directory.
pub const MANIFEST_FILE: &str = "kaged-plugin.yaml";

/// Why a manifest could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The YAML does not fit the manifest model.
    #[error("{message}")]
    Yaml {
        /// The message, naming the location when the parser knows it.
        message: String,
    },
}

impl Manifest {
    /// Parse a manifest from YAML text.
    pub fn from_yaml_str(text: &str) -> Result<Manifest, ManifestError> {
        serde_saphyr::from_str(text).map_err(|e| ManifestError::Yaml {
            message: e.to_string(),
        })
    }

    /// Load `DIR/kaged-plugin.yaml`.
    pub fn load_dir(dir: &Path) -> Result<Manifest, ManifestError> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).map_err(|source| ManifestError::Io {
            path: path.clone(),
            source,
        })?;
        Manifest::from_yaml_str(&text)
    }
}
