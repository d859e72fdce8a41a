//! Copying what install selected ([`super::select`]) into the store, and
//! how much an installed copy holds. Files keep their permission bits,
//! symbolic links stay links (never followed), directories are created
//! one by one (never through a link), so nothing is written outside the
//! copy.

use std::path::Path;

use super::error::InstallError;
use super::select::Selection;

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

/// A copy larger than this gets a warning in the install plan
/// ([`large_copy_warning`]): 256 MiB, far above any interpreter plugin
/// with its dependencies, and below a Rust package's debug `target/`.
pub const LARGE_COPY_BYTES: u64 = 256 * 1024 * 1024;

/// The install plan's warning for a copy of more than
/// [`LARGE_COPY_BYTES`], naming what makes it large and what to do.
pub(crate) fn large_copy_warning(sel: &Selection) -> Option<String> {
    const MIB: u64 = 1024 * 1024;
    if sel.bytes <= LARGE_COPY_BYTES {
        return None;
    }
    let total = sel.bytes / MIB;
    let why = match sel.target_bytes {
        0 => String::new(),
        t => format!(", {} MiB of it under target/ (build output)", t / MIB),
    };
    Some(format!(
        "install copies {total} MiB{why}: `cargo kaged pack` writes a layout of only what runs \
         (installed in its place), or a `.kagedignore` line can leave a directory out"
    ))
}

/// How [`Selection::copy`] writes regular files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CopyMode {
    /// Copy every byte (the daemon's store: the copy outlives the source).
    #[default]
    Bytes,
    /// Hard-link each file where the file system allows it (same device,
    /// a file the caller may link), copying the rest: a throwaway store
    /// (the conformance suite's) whose plugin runs with its directory
    /// read-only, so a multi-GiB `target/` costs no time.
    HardLinks,
}

impl Selection {
    /// Copy the chosen entries from `from` into `to` (which must not
    /// exist); an entry that is no longer a file or link is skipped.
    pub(crate) fn copy(&self, from: &Path, to: &Path, mode: CopyMode) -> Result<(), InstallError> {
        let io = InstallError::io_at;
        std::fs::create_dir_all(to).map_err(io(to))?;
        for rel in &self.dirs {
            let dst = to.join(rel);
            std::fs::create_dir(&dst).map_err(io(&dst))?;
        }
        for rel in &self.files {
            let (src, dst) = (from.join(rel), to.join(rel));
            let meta = src.symlink_metadata().map_err(io(&src))?;
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&src).map_err(io(&src))?;
                std::os::unix::fs::symlink(&target, &dst).map_err(io(&dst))?;
            } else if meta.is_file() {
                let linked = mode == CopyMode::HardLinks && std::fs::hard_link(&src, &dst).is_ok();
                if !linked {
                    std::fs::copy(&src, &dst).map_err(io(&dst))?;
                }
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
