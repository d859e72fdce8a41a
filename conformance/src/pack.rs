//! Packing a built plugin into a self-contained plugin directory
//! (ADDENDUM §14), and installing it the way the daemon would: what
//! `cargo kaged pack` and `cargo kaged test` do, and what
//! [`crate::testing::assert_conforms`] certifies.
//!
//! A packed directory holds the executable under `bin/`, a
//! `kaged-plugin.yaml` whose `command[0]` is `./bin/NAME`, and every file
//! the manifest's `command` arguments name (taken from the package
//! directory, at the same relative path).
//!
//! ```no_run
//! use kaged_conformance::pack::{install_packed, pack, PackInput};
//! # fn demo() -> Result<(), kaged_conformance::pack::PackError> {
//! let manifest = std::fs::read_to_string("kaged-plugin.yaml").unwrap();
//! let packed = pack(
//!     &PackInput {
//!         manifest: &manifest,
//!         binary: "target/release/my-plugin".as_ref(),
//!         source_dir: ".".as_ref(),
//!     },
//!     "target/kaged/my-plugin".as_ref(),
//! )?;
//! let installed = install_packed(&packed.dir, "/tmp/kaged-store".as_ref())?;
//! # Ok(()) }
//! ```

use std::path::{Component, Path, PathBuf};

use kaged_host_core::audit::AuditLog;
use kaged_host_core::validate::{command_leaves_plugin_dir, validate_dir};
use kaged_host_engine::{InstallError, PluginStore};
use kaged_plugin_protocol::manifest::{Manifest, MANIFEST_FILE};

/// Where a packed plugin's executable goes, inside its directory.
pub const BIN_DIR: &str = "bin";

/// What to pack.
#[derive(Debug, Clone, Copy)]
pub struct PackInput<'a> {
    /// The manifest (YAML): `--print-manifest`'s output, or a checked-in
    /// `kaged-plugin.yaml`. Its `command[0]` is replaced; its other
    /// arguments are kept.
    pub manifest: &'a str,
    /// The built plugin executable, copied to `bin/<its file name>`.
    pub binary: &'a Path,
    /// The package directory: relative paths among the `command`
    /// arguments are taken from here.
    pub source_dir: &'a Path,
}

/// A packed plugin directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packed {
    /// The directory.
    pub dir: PathBuf,
    /// The plugin's name.
    pub name: String,
    /// The plugin's version.
    pub version: String,
    /// Its `command[0]` (`./bin/NAME`).
    pub command: String,
    /// The files copied besides the executable and the manifest, relative
    /// to [`Packed::dir`].
    pub files: Vec<PathBuf>,
    /// The packed manifest's validation warnings, one per line.
    pub warnings: Vec<String>,
}

/// Why a plugin could not be packed or installed.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// The manifest does not parse.
    #[error("the manifest to pack does not parse")]
    Manifest(#[source] kaged_plugin_protocol::manifest::ManifestError),
    /// The executable is not a file.
    #[error("the plugin executable {} is not a file (build it first)", path.display())]
    NoBinary {
        /// The path given.
        path: PathBuf,
    },
    /// A `command` argument names a file outside the package directory.
    #[error(
        "`command` argument `{arg}` names a file outside the package directory {}: \
         it cannot be packed (put it inside the package)",
        dir.display()
    )]
    FileOutside {
        /// The argument.
        arg: String,
        /// The package directory.
        dir: PathBuf,
    },
    /// The output directory exists and is not a packed plugin.
    #[error(
        "{} exists and is not a packed plugin directory (no {MANIFEST_FILE}); \
         choose another --out or remove it",
        dir.display()
    )]
    OutOccupied {
        /// The directory.
        dir: PathBuf,
    },
    /// The packed manifest does not validate.
    #[error("the packed manifest in {} is invalid:\n{report}", dir.display())]
    Invalid {
        /// The packed directory.
        dir: PathBuf,
        /// Every error, one per line.
        report: String,
    },
    /// Installing the packed directory failed.
    #[error("installing {} failed", dir.display())]
    Install {
        /// The packed directory.
        dir: PathBuf,
        /// The store's error.
        #[source]
        source: InstallError,
    },
    /// A file operation failed.
    #[error("{}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// For `map_err`: an I/O error at `path`.
fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> PackError {
    let path = path.to_path_buf();
    move |source| PackError::Io { path, source }
}

/// Pack `input` into `out` (created; a previous pack there is replaced):
/// the executable under `bin/`, the manifest with `command[0]` pointing
/// at it, and the files the `command` arguments name. The packed manifest
/// must validate.
pub fn pack(input: &PackInput<'_>, out: &Path) -> Result<Packed, PackError> {
    let mut manifest = Manifest::from_yaml_str(input.manifest).map_err(PackError::Manifest)?;
    if !input.binary.is_file() {
        return Err(PackError::NoBinary {
            path: input.binary.to_path_buf(),
        });
    }
    let file_name = input
        .binary
        .file_name()
        .ok_or_else(|| PackError::NoBinary {
            path: input.binary.to_path_buf(),
        })?;
    prepare_out(out)?;
    let bin = out.join(BIN_DIR);
    std::fs::create_dir_all(&bin).map_err(io_at(&bin))?;
    let dest = bin.join(file_name);
    std::fs::copy(input.binary, &dest).map_err(io_at(&dest))?;
    let command = format!("./{BIN_DIR}/{}", file_name.to_string_lossy());
    match manifest.command.first_mut() {
        Some(first) => *first = command.clone(),
        None => manifest.command.push(command.clone()),
    }
    let mut files = Vec::new();
    for arg in manifest.command.iter().skip(1) {
        if let Some(rel) = named_file(arg, input.source_dir)? {
            copy_tree(&input.source_dir.join(&rel), &out.join(&rel))?;
            files.push(rel);
        }
    }
    let text = format!(
        "# A packed plugin directory (ADDENDUM §14): self-contained, ready for\n\
         # `plugin install`. Generated; edit the plugin's code, then pack again.\n{}",
        manifest.to_yaml()
    );
    let path = out.join(MANIFEST_FILE);
    std::fs::write(&path, text).map_err(io_at(&path))?;
    let report = validate_dir(out);
    if report.has_errors() {
        return Err(PackError::Invalid {
            dir: out.to_path_buf(),
            report: report
                .errors()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n"),
        });
    }
    Ok(Packed {
        dir: out.to_path_buf(),
        name: manifest.name,
        version: manifest.version,
        command,
        files,
        warnings: report.warnings().map(ToString::to_string).collect(),
    })
}

/// Install the packed plugin in `dir` into the plugin store at
/// `store_root` (created if needed) the way the daemon does, with consent
/// given: validated, refused unless self-contained, copied. Returns the
/// installed copy's directory.
pub fn install_packed(dir: &Path, store_root: &Path) -> Result<PathBuf, PackError> {
    let install = |source| PackError::Install {
        dir: dir.to_path_buf(),
        source,
    };
    let store = PluginStore::open(store_root, AuditLog::memory()).map_err(install)?;
    let entry = store.install(dir, |_| true).map_err(install)?;
    Ok(store.plugin_dir(&entry.name))
}

/// The output directory, empty: a previous pack is removed; anything
/// else there is refused.
fn prepare_out(out: &Path) -> Result<(), PackError> {
    if out.exists() {
        let empty = std::fs::read_dir(out).map_err(io_at(out))?.next().is_none();
        if !empty && !out.join(MANIFEST_FILE).is_file() {
            return Err(PackError::OutOccupied {
                dir: out.to_path_buf(),
            });
        }
        std::fs::remove_dir_all(out).map_err(io_at(out))?;
    }
    std::fs::create_dir_all(out).map_err(io_at(out))
}

/// The relative path a `command` argument names when it is a file or
/// directory of the package (flags and other words are not); an error
/// when it names an existing file outside the package.
fn named_file(arg: &str, source_dir: &Path) -> Result<Option<PathBuf>, PackError> {
    let path = Path::new(arg);
    if arg.starts_with('-') || path.is_absolute() || !source_dir.join(path).exists() {
        return Ok(None);
    }
    if command_leaves_plugin_dir(arg) {
        return Err(PackError::FileOutside {
            arg: arg.to_string(),
            dir: source_dir.to_path_buf(),
        });
    }
    let rel: PathBuf = path
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    Ok((!rel.as_os_str().is_empty()).then_some(rel))
}

/// Copy a file or a directory tree (files with their permissions).
fn copy_tree(from: &Path, to: &Path) -> Result<(), PackError> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(io_at(parent))?;
    }
    if from.is_dir() {
        std::fs::create_dir_all(to).map_err(io_at(to))?;
        for entry in std::fs::read_dir(from).map_err(io_at(from))? {
            let entry = entry.map_err(io_at(from))?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        std::fs::copy(from, to).map(drop).map_err(io_at(to))
    }
}
