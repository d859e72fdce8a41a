//! The tree digest of a plugin's installed copy ([`installed_digest`]):
//! the directory is installed into a scratch store exactly as `plugin
//! install` does (`.git/`, a Rust package's `target/` and what
//! `.kagedignore` names left out), then every entry of the copy is listed
//! in byte order of its relative path, one line each, and the list hashed
//! with SHA-256:
//!
//! ```text
//! d <path>                        a directory
//! f <x|-> <sha256 of content> <path>   a file, executable or not
//! l <target> <path>               a symbolic link, not followed
//! ```
//!
//! Owners, times and other mode bits are not part of it: a copy unpacked
//! anywhere digests the same.

use std::path::{Path, PathBuf};

use kaged_host_core::AuditLog;
use kaged_host_engine::PluginStore;
use kaged_plugin_protocol::manifest::Manifest;
use sha2::{Digest, Sha256};

/// Why no statement could be made, or checked.
#[derive(Debug, thiserror::Error)]
pub enum AttestError {
    /// The plugin directory cannot be read or installed.
    #[error("cannot digest the plugin: {0}")]
    Plugin(String),
    /// A file could not be read or written.
    #[error("{0}")]
    Io(#[source] std::io::Error),
}

/// The SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The tree digest of the copy `plugin install` makes of `dir`, and the
/// listing it hashes.
pub fn installed_digest(dir: &Path) -> Result<(String, String), AttestError> {
    let manifest = Manifest::load_dir(dir).map_err(|e| AttestError::Plugin(e.to_string()))?;
    let root = kaged_host_engine::scratch_store_dir(dir).map_err(AttestError::Io)?;
    let store = PluginStore::open(root.path(), AuditLog::memory())
        .map_err(|e| AttestError::Plugin(e.to_string()))?
        .with_copy_mode(kaged_host_engine::CopyMode::HardLinks);
    store
        .install(dir, |_| true)
        .map_err(|e| AttestError::Plugin(format!("`plugin install` refuses it: {e}")))?;
    let listing = listing(&store.plugin_dir(&manifest.name))?;
    Ok((sha256_hex(listing.as_bytes()), listing))
}

/// The listing of the tree at `root` (see the module docs).
pub fn listing(root: &Path) -> Result<String, AttestError> {
    let mut entries: Vec<(String, PathBuf)> = Vec::new();
    walk(root, root, &mut entries)?;
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut out = String::new();
    for (rel, path) in entries {
        let meta = std::fs::symlink_metadata(&path).map_err(AttestError::Io)?;
        let line = if meta.file_type().is_symlink() {
            let to = std::fs::read_link(&path).map_err(AttestError::Io)?;
            format!("l {} {rel}", to.display())
        } else if meta.is_dir() {
            format!("d {rel}")
        } else {
            use std::os::unix::fs::PermissionsExt;
            let x = if meta.permissions().mode() & 0o111 != 0 {
                "x"
            } else {
                "-"
            };
            let bytes = std::fs::read(&path).map_err(AttestError::Io)?;
            format!("f {x} {} {rel}", sha256_hex(&bytes))
        };
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<(), AttestError> {
    for entry in std::fs::read_dir(dir).map_err(AttestError::Io)? {
        let path = entry.map_err(AttestError::Io)?.path();
        let rel = path
            .strip_prefix(root)
            .map_or_else(|_| path.display().to_string(), |p| p.display().to_string());
        let meta = std::fs::symlink_metadata(&path).map_err(AttestError::Io)?;
        out.push((rel, path.clone()));
        if meta.is_dir() {
            walk(root, &path, out)?;
        }
    }
    Ok(())
}
