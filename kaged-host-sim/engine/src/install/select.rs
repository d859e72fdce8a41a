//! What `plugin install` copies: the plugin directory (plugin-host.md,
//! install step 6), less `.git/` (ADDENDUM §14) and less what the author's
//! `.kagedignore` leaves out. A directory version control ignores
//! (`node_modules/`, `vendor/`, a Rust package's `target/`) is copied: it
//! is often what the command needs at run time (ADDENDUM §16). When
//! `cargo kaged pack` has written a packed layout, that installs instead
//! ([`packed_layout`]), and a large copy gets a warning naming it
//! ([`super::copy::large_copy_warning`]). The manifest and every file
//! `command` names are copied whatever `.kagedignore` says.
//!
//! Nothing is followed out of the directory: the walk reads symbolic links
//! as links (they are copied as links), and a path `command` names is only
//! taken when no directory on its way is a link. Sockets, FIFOs and devices
//! are left out (copying a FIFO would block).

use std::fmt;
use std::path::{Component, Path, PathBuf};

use kaged_plugin_protocol::manifest::MANIFEST_FILE;

use super::error::InstallError;
use super::kagedignore::KagedIgnore;
use super::packed::package_packed_dir;

/// Never copied, at any depth: version control history.
const GIT: &str = ".git";

/// Why install leaves an entry of the plugin directory out of its copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftOutReason {
    /// `.git`, at any depth: history, never copied.
    Git,
    /// A line of `.kagedignore` matched it.
    KagedIgnore {
        /// The pattern as the file writes it.
        pattern: String,
    },
    /// Neither a file, a directory nor a symbolic link (a socket, a FIFO,
    /// a device).
    NotAFile,
}

/// An entry of the plugin directory that install leaves out (a directory
/// is listed once, not its contents), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// Its path, relative to the plugin directory.
    pub path: PathBuf,
    /// Whether it is a directory.
    pub is_dir: bool,
    /// Why it is left out.
    pub reason: LeftOutReason,
}

impl fmt::Display for LeftOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let slash = if self.is_dir { "/" } else { "" };
        write!(f, "`{}{slash}` (", self.path.display())?;
        match &self.reason {
            LeftOutReason::Git => write!(f, "history, never copied)"),
            LeftOutReason::KagedIgnore { pattern } => write!(f, ".kagedignore: `{pattern}`)"),
            LeftOutReason::NotAFile => write!(f, "not a file, directory or link)"),
        }
    }
}

/// What install copies from a plugin directory, relative to it.
#[derive(Debug, Default)]
pub(crate) struct Selection {
    /// Directories to create, parents first.
    pub dirs: Vec<PathBuf>,
    /// Regular files and symbolic links to copy.
    pub files: Vec<PathBuf>,
    /// Their bytes (a link counts as its own size).
    pub bytes: u64,
    /// The bytes under a top-level `target/`.
    pub target_bytes: u64,
    /// What is left out.
    pub left_out: Vec<LeftOut>,
}

/// The packed layout `cargo kaged pack` writes for a Rust package
/// (`<target dir>/kaged/<name>/`: [`package_packed_dir`]), when there is
/// one: what installs in place of the development directory.
pub(crate) fn packed_layout(src: &Path, name: &str) -> Option<PathBuf> {
    let packed = package_packed_dir(src, name);
    packed.join(MANIFEST_FILE).is_file().then_some(packed)
}

/// `command`'s entries that name a path inside the plugin directory
/// (relative, without `..`), as relative paths.
fn command_paths(command: &[String]) -> Vec<PathBuf> {
    command
        .iter()
        .map(Path::new)
        .filter(|p| {
            p.is_relative()
                && p.components().all(|c| !matches!(c, Component::ParentDir))
                && p.components().count() > 0
        })
        .map(|p| p.components().filter(|c| *c != Component::CurDir).collect())
        .collect()
}

/// Why `rel` (relative to `src`) is never copied, if it is not.
fn never_copied(rel: &Path) -> Option<LeftOutReason> {
    rel.components()
        .any(|c| c.as_os_str() == GIT)
        .then_some(LeftOutReason::Git)
}

/// The paths inside `src` that `command` names, or the refusal when one
/// lies where install never copies (`.git/`): the install plan checks
/// this before asking for consent.
pub(crate) fn command_files(name: &str, command: &[String]) -> Result<Vec<PathBuf>, InstallError> {
    let paths = command_paths(command);
    if let Some(rel) = paths.iter().find(|rel| never_copied(rel).is_some()) {
        return Err(InstallError::CommandNotShipped {
            name: name.to_string(),
            command: rel.display().to_string(),
            dir: format!("{GIT}/"),
        });
    }
    Ok(paths)
}

/// Choose what to copy from `src` for a plugin started with `command`.
pub(crate) fn select(
    src: &Path,
    name: &str,
    command: &[String],
) -> Result<Selection, InstallError> {
    let forced = command_files(name, command)?;
    let ignore = KagedIgnore::load(src)?;
    let mut sel = Selection::default();
    let mut pending = vec![PathBuf::new()];
    while let Some(rel_dir) = pending.pop() {
        for (rel, kind) in entries(src, &rel_dir)? {
            let is_dir = kind.is_dir();
            let reason = never_copied(&rel).or_else(|| {
                let keep = rel.as_os_str() == MANIFEST_FILE || forced.contains(&rel);
                let pattern = ignore.matched(&rel, is_dir).filter(|_| !keep);
                pattern.map(|pattern| LeftOutReason::KagedIgnore { pattern })
            });
            let reason = reason.or_else(|| {
                (!is_dir && !kind.is_file() && !kind.is_symlink())
                    .then_some(LeftOutReason::NotAFile)
            });
            match reason {
                Some(reason) => sel.left_out.push(LeftOut {
                    path: rel,
                    is_dir,
                    reason,
                }),
                None if is_dir => {
                    sel.dirs.push(rel.clone());
                    pending.push(rel);
                }
                None => sel.files.push(rel),
            }
        }
    }
    for rel in forced {
        if !sel.files.contains(&rel) && reachable_file(src, &rel) {
            let parents = rel
                .ancestors()
                .skip(1)
                .filter(|p| !p.as_os_str().is_empty());
            sel.dirs.extend(parents.map(Path::to_path_buf));
            sel.files.push(rel);
        }
    }
    for rel in &sel.files {
        let len = src.join(rel).symlink_metadata().map_or(0, |m| m.len());
        sel.bytes += len;
        if rel
            .components()
            .next()
            .is_some_and(|c| c.as_os_str() == "target")
        {
            sel.target_bytes += len;
        }
    }
    sel.dirs.sort();
    sel.dirs.dedup();
    sel.files.sort();
    sel.left_out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(sel)
}

/// The entries of `src/rel_dir`, as paths relative to `src` with their
/// types (links not followed).
fn entries(src: &Path, rel_dir: &Path) -> Result<Vec<(PathBuf, std::fs::FileType)>, InstallError> {
    let dir = src.join(rel_dir);
    let walk = |e: std::io::Error| InstallError::Walk {
        dir: dir.clone(),
        message: e.to_string(),
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(walk)? {
        let entry = entry.map_err(walk)?;
        let kind = entry.file_type().map_err(walk)?;
        out.push((rel_dir.join(entry.file_name()), kind));
    }
    Ok(out)
}

/// Whether `rel` is a file or a link inside `src` reached without passing
/// through a link (copying it then writes nowhere but into the copy).
fn reachable_file(src: &Path, rel: &Path) -> bool {
    let through_dirs = rel
        .ancestors()
        .skip(1)
        .filter(|p| !p.as_os_str().is_empty())
        .all(|p| src.join(p).symlink_metadata().is_ok_and(|m| m.is_dir()));
    let kind = src.join(rel).symlink_metadata().map(|m| m.file_type());
    through_dirs && kind.is_ok_and(|k| k.is_file() || k.is_symlink())
}

#[cfg(test)]
#[path = "select_tests.rs"]
mod tests;
