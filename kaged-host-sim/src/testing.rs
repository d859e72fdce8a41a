//! Helpers for tests that drive a plugin built by cargo.
//!
//! A plugin directory's `kaged-plugin.yaml` names its binary relative to the
//! directory (`../../target/debug/echo`), which is wrong when cargo builds
//! elsewhere (`CARGO_TARGET_DIR`, release builds, `CARGO_BIN_EXE_*` paths).
//! [`StagedPlugin`] copies the manifest into a temporary directory with
//! `command[0]` pointing at the given binary.

use std::path::{Path, PathBuf};

use kaged_plugin_protocol::manifest::{Manifest, MANIFEST_FILE};

/// Why a plugin could not be staged.
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    /// The source manifest could not be loaded.
    #[error("cannot load the manifest of {dir}: {source}")]
    Manifest {
        /// The source plugin directory.
        dir: PathBuf,
        /// The cause.
        #[source]
        source: kaged_plugin_protocol::manifest::ManifestError,
    },
    /// The temporary directory could not be written.
    #[error("cannot write the staged plugin: {0}")]
    Io(#[from] std::io::Error),
}

/// A temporary plugin directory whose manifest runs a given binary. The
/// directory is removed on drop.
///
/// ```no_run
/// use kaged_host_sim::testing::StagedPlugin;
/// # fn demo() -> Result<(), kaged_host_sim::testing::StageError> {
/// let staged = StagedPlugin::new("examples/echo".as_ref(), "/path/to/target/debug/echo")?;
/// assert!(staged.dir().join("kaged-plugin.yaml").is_file());
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct StagedPlugin {
    dir: tempfile::TempDir,
    manifest: Manifest,
}

impl StagedPlugin {
    /// Stage `source_dir`'s manifest with `command[0]` replaced by `binary`
    /// (other arguments kept). The manifest is written as JSON, which is
    /// valid YAML.
    pub fn new(source_dir: &Path, binary: impl AsRef<Path>) -> Result<StagedPlugin, StageError> {
        let mut manifest =
            Manifest::load_dir(source_dir).map_err(|source| StageError::Manifest {
                dir: source_dir.to_path_buf(),
                source,
            })?;
        let bin = binary.as_ref().to_string_lossy().into_owned();
        match manifest.command.first_mut() {
            Some(first) => *first = bin,
            None => manifest.command.push(bin),
        }
        let dir = tempfile::Builder::new().prefix("kaged-staged-").tempdir()?;
        let text = serde_json::to_string_pretty(&manifest).map_err(std::io::Error::other)?;
        std::fs::write(dir.path().join(MANIFEST_FILE), text)?;
        Ok(StagedPlugin { dir, manifest })
    }

    /// The staged plugin directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The staged manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
}
