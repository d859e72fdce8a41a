//! What `plugin install` copies into the store, and the copying.
//!
//! Only what the plugin needs: the files of the source directory that git
//! would keep (its `.gitignore`s honoured, with or without a repository),
//! never `.git/` nor a top-level `target/` (build output, any size), plus
//! every file the manifest's `command` names, ignored or not. A `command`
//! that points into `target/` (an unpacked Rust plugin) is refused: the
//! packed layout is what ships (`cargo kaged pack`). Files keep their
//! permission bits, symbolic links stay links, nothing outside the source
//! is followed.

use std::path::{Component, Path, PathBuf};

use kaged_plugin_protocol::manifest::MANIFEST_FILE;

use super::error::InstallError;

/// Directories never copied: at any depth (`.git`) or at the top (`target`).
const NEVER_ANYWHERE: &str = ".git";
const NEVER_AT_TOP: &str = "target";

/// The files chosen for the store, relative to the source.
#[derive(Debug, Default)]
pub(crate) struct Selection {
    files: Vec<PathBuf>,
}

/// How much an installed copy holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InstalledSize {
    /// Regular files and links.
    pub files: u64,
    /// Their bytes (a link counts as its own size, not its target's).
    pub bytes: u64,
}

impl std::fmt::Display for InstalledSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const MIB: f64 = 1024.0 * 1024.0;
        let (n, s) = (self.files, if self.files == 1 { "" } else { "s" });
        if self.bytes >= 1024 * 1024 {
            write!(f, "{n} file{s}, {:.1} MiB", self.bytes as f64 / MIB)
        } else {
            write!(f, "{n} file{s}, {:.1} KiB", self.bytes as f64 / 1024.0)
        }
    }
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

/// Whether `rel` lies under a directory install never copies.
fn under_never(rel: &Path) -> Option<&'static str> {
    let mut parts = rel.components();
    match parts.next() {
        Some(Component::Normal(first)) if first == NEVER_AT_TOP => return Some("target/"),
        _ => {}
    }
    rel.components()
        .any(|c| c.as_os_str() == NEVER_ANYWHERE)
        .then_some(".git/")
}

/// The packed layout `cargo kaged pack` writes inside a development
/// directory (`target/kaged/<name>/`), when there is one: what installs in
/// its place.
pub(crate) fn packed_layout(src: &Path, name: &str) -> Option<PathBuf> {
    let packed = src.join("target").join("kaged").join(name);
    packed.join(MANIFEST_FILE).is_file().then_some(packed)
}

/// The paths inside the plugin directory that `command` names, or the
/// refusal when one lies where install never copies (no I/O: the install
/// plan checks this before asking for consent).
pub(crate) fn command_files(name: &str, command: &[String]) -> Result<Vec<PathBuf>, InstallError> {
    let paths = command_paths(command);
    if let Some((rel, dir)) = paths.iter().find_map(|p| under_never(p).map(|d| (p, d))) {
        return Err(InstallError::CommandNotShipped {
            name: name.to_string(),
            command: rel.display().to_string(),
            dir: dir.to_string(),
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
    let mut files: Vec<PathBuf> = command_files(name, command)?
        .into_iter()
        .filter(|rel| src.join(rel).symlink_metadata().is_ok())
        .collect();
    let walk = ignore::WalkBuilder::new(src)
        .hidden(false)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry({
            let src = src.to_path_buf();
            move |e| {
                let rel = e.path().strip_prefix(&src).unwrap_or(e.path());
                under_never(rel).is_none()
            }
        })
        .build();
    for entry in walk {
        let entry = entry.map_err(|e| InstallError::Walk {
            dir: src.to_path_buf(),
            message: e.to_string(),
        })?;
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        let rel = entry.path().strip_prefix(src).unwrap_or(entry.path());
        if !files.iter().any(|f| f == rel) {
            files.push(rel.to_path_buf());
        }
    }
    files.sort();
    Ok(Selection { files })
}

impl Selection {
    /// Copy the chosen files from `from` into `to` (which must not exist).
    pub(crate) fn copy(&self, from: &Path, to: &Path) -> Result<(), InstallError> {
        let io = InstallError::io_at;
        std::fs::create_dir_all(to).map_err(io(to))?;
        for rel in &self.files {
            let (src, dst) = (from.join(rel), to.join(rel));
            if let Some(parent) = dst.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            let meta = src.symlink_metadata().map_err(io(&src))?;
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&src).map_err(io(&src))?;
                std::os::unix::fs::symlink(&target, &dst).map_err(io(&dst))?;
            } else {
                std::fs::copy(&src, &dst).map_err(io(&dst))?;
            }
        }
        Ok(())
    }
}

/// What the tree at `dir` holds.
pub(crate) fn size_of(dir: &Path) -> Result<InstalledSize, InstallError> {
    let io = InstallError::io_at;
    let mut size = InstalledSize::default();
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let meta = entry.path().symlink_metadata().map_err(io(&entry.path()))?;
        if meta.is_dir() {
            let inner = size_of(&entry.path())?;
            size.files += inner.files;
            size.bytes += inner.bytes;
        } else {
            size.files += 1;
            size.bytes += meta.len();
        }
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(root: &Path, rel: &str, body: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(p, body).expect("write");
    }

    fn chosen(src: &Path, command: &[&str]) -> Vec<String> {
        let command: Vec<String> = command.iter().map(|s| s.to_string()).collect();
        let sel = select(src, "p", &command).expect("selected");
        sel.files.iter().map(|p| p.display().to_string()).collect()
    }

    #[test]
    fn git_and_target_and_ignored_files_stay_behind_but_the_command_ships() {
        let src = tempfile::tempdir().expect("tempdir");
        let s = src.path();
        touch(s, "kaged-plugin.yaml", "name: p\n");
        touch(s, ".gitignore", "*.log\nbuild/\nrun.sh\n");
        touch(s, ".git/HEAD", "ref");
        touch(s, "target/release/p", "binary");
        touch(s, "debug.log", "noise");
        touch(s, "build/out", "noise");
        touch(s, "run.sh", "#!/bin/sh");
        touch(s, "lib/plugin.py", "print()");
        touch(s, "lib/target/data", "kept: not top-level");
        assert_eq!(
            chosen(s, &["./run.sh"]),
            [
                ".gitignore",
                "kaged-plugin.yaml",
                "lib/plugin.py",
                "lib/target/data",
                "run.sh"
            ]
        );
    }

    #[test]
    fn a_command_under_target_is_refused_with_a_hint_to_pack() {
        let src = tempfile::tempdir().expect("tempdir");
        touch(src.path(), "target/release/p", "binary");
        let err = select(src.path(), "p", &["./target/release/p".into()])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("target/") && err.contains("cargo kaged pack"),
            "{err}"
        );
    }

    #[test]
    fn sizes_read_in_the_unit_that_fits() {
        let kib = InstalledSize {
            files: 2,
            bytes: 2048,
        };
        let mib = InstalledSize {
            files: 1,
            bytes: 3 * 1024 * 1024,
        };
        assert_eq!(
            (kib.to_string(), mib.to_string()),
            ("2 files, 2.0 KiB".into(), "1 file, 3.0 MiB".into())
        );
    }
}
