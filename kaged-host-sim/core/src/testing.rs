//! Helpers for tests that drive a plugin built by cargo, or fixture
//! plugins that share a library.
//!
//! A plugin directory's `kaged-plugin.yaml` names its binary relative to the
//! directory (`../../target/debug/echo`), which is wrong when cargo builds
//! elsewhere (`CARGO_TARGET_DIR`, release builds, `CARGO_BIN_EXE_*` paths).
//! [`StagedPlugin`] copies the manifest into a temporary directory with
//! `command[0]` pointing at the given binary.
//!
//! A cage shows a plugin nothing outside its own directory (ADDENDUM §13,
//! §14), so fixture plugins that import a shared library from a sibling
//! directory (`../_lib`) cannot find it when caged. [`stage_plugin_tree`]
//! copies such a tree with the library's files inside every plugin
//! directory.

pub mod gated;

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
/// use kaged_host_core::testing::StagedPlugin;
/// # fn demo() -> Result<(), kaged_host_core::testing::StageError> {
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

    /// Add `capability` (`read:fs:/tmp/x`...) to the staged manifest: a
    /// test that points the plugin at its own temporary files grants them,
    /// as an operator would (the plugin runs caged).
    pub fn grant(&mut self, capability: &str) -> Result<(), StageError> {
        self.manifest
            .capabilities
            .push(kaged_plugin_protocol::manifest::CapabilityEntry::Text(
                capability.to_string(),
            ));
        let text = serde_json::to_string_pretty(&self.manifest).map_err(std::io::Error::other)?;
        std::fs::write(self.dir.path().join(MANIFEST_FILE), text)?;
        Ok(())
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

/// Copy the tree `source` (a directory of plugin directories) to `dest`
/// (created), putting a copy of every file of `source/shared` into each
/// plugin directory, next to its own files (a script finds a library
/// module in its own directory). Directories whose name starts with `_`
/// (the shared one too) and `__pycache__` are not copied as plugins;
/// symlinks are copied as symlinks, permissions kept.
///
/// ```no_run
/// # fn demo() -> std::io::Result<()> {
/// let root = std::env::temp_dir().join("fixtures-copy");
/// kaged_host_core::testing::stage_plugin_tree("tests/fixtures/plugins".as_ref(), "_lib", &root)?;
/// assert!(root.join("good/kproto.py").is_file());
/// # Ok(()) }
/// ```
pub fn stage_plugin_tree(source: &Path, shared: &str, dest: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dest)?;
    let lib = source.join(shared);
    let lib_files: Vec<PathBuf> = match std::fs::read_dir(&lib) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect(),
        Err(_) => Vec::new(),
    };
    for entry in std::fs::read_dir(source)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('_') || !entry.file_type()?.is_dir() {
            continue;
        }
        let to = dest.join(&name);
        copy_dir(&entry.path(), &to)?;
        for f in &lib_files {
            if let Some(file) = f.file_name() {
                if !to.join(file).exists() {
                    std::fs::copy(f, to.join(file))?;
                }
            }
        }
    }
    Ok(())
}

/// Copy `from` to `to` recursively (symlinks as symlinks).
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_name() == "__pycache__" {
            continue;
        }
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        } else if kind.is_dir() {
            copy_dir(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

/// Whether plugins can be caged here, for a test that needs the cage: `true`
/// when they can; under `CI=true`, a panic when they cannot (a cage test
/// never passes silently); elsewhere `false`, after saying on stderr that
/// `test` is skipped and why.
pub async fn cage_available_for(test: &str) -> bool {
    match crate::cage::availability().await {
        Ok(_) => true,
        Err(why) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true and plugins cannot be caged ({test}): {why}")
        }
        Err(why) => {
            eprintln!("SKIPPED (not CI): {test}: plugins cannot be caged here: {why}");
            false
        }
    }
}

/// [`cage_available_for`] from a synchronous test (not from inside a
/// runtime).
pub fn cage_available_for_blocking(test: &str) -> bool {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime for the cage probe")
        .block_on(cage_available_for(test))
}
