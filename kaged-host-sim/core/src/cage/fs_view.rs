//! The one question the cage compiler asks the filesystem: what is at this
//! path, without following a final symlink (`lstat`). Behind a trait so
//! that the compiler is a pure function of a [`FsView`]: [`HostFs`] is the
//! real disk, [`MemFs`] an in-memory tree for unit and property tests (and
//! for previews of a cage on another machine).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// What `lstat` finds at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// A directory.
    Dir,
    /// Anything else that exists and is not a symlink (file, device...).
    File,
    /// A symlink, with its target as written (relative or absolute).
    Symlink(PathBuf),
    /// Nothing there (or a parent is not a directory).
    Missing,
}

/// A view of a filesystem: `lstat` of an absolute, normalised path.
pub trait FsView {
    /// What is at `path` (absolute, no `.` or `..`), not following a final
    /// symlink. "Not found" and "not a directory" are [`Node::Missing`];
    /// other failures (permission denied...) are errors.
    fn lstat(&self, path: &Path) -> io::Result<Node>;

    /// Whether the file at `path` (absolute, symlinks resolved) has an
    /// execute bit (`exec:` binds one executable file, ADDENDUM §16).
    fn executable(&self, path: &Path) -> io::Result<bool>;
}

/// The real filesystem of this machine.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostFs;

impl FsView for HostFs {
    fn lstat(&self, path: &Path) -> io::Result<Node> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if missing(&e) => return Ok(Node::Missing),
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            Ok(Node::Symlink(std::fs::read_link(path)?))
        } else if kind.is_dir() {
            Ok(Node::Dir)
        } else {
            Ok(Node::File)
        }
    }

    fn executable(&self, path: &Path) -> io::Result<bool> {
        use std::os::unix::fs::PermissionsExt;
        Ok(std::fs::metadata(path)?.permissions().mode() & 0o111 != 0)
    }
}

fn missing(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound
        || e.raw_os_error() == Some(rustix::io::Errno::NOTDIR.raw_os_error())
}

/// An in-memory filesystem: explicit entries, and every ancestor of an
/// entry is a directory. `/` always exists.
///
/// ```
/// use kaged_host_core::cage::{FsView, MemFs, Node};
/// let fs = MemFs::new().file("/etc/hosts").symlink("/bin", "usr/bin");
/// assert_eq!(fs.lstat("/etc".as_ref()).unwrap(), Node::Dir);
/// assert_eq!(fs.lstat("/bin".as_ref()).unwrap(), Node::Symlink("usr/bin".into()));
/// assert_eq!(fs.lstat("/opt".as_ref()).unwrap(), Node::Missing);
/// ```
#[derive(Debug, Clone, Default)]
pub struct MemFs {
    entries: BTreeMap<PathBuf, Node>,
    not_executable: std::collections::BTreeSet<PathBuf>,
}

impl MemFs {
    /// An empty tree (only `/`).
    pub fn new() -> MemFs {
        MemFs::default()
    }

    /// Add a directory (and, implicitly, its ancestors).
    pub fn dir(mut self, path: impl Into<PathBuf>) -> MemFs {
        self.entries.insert(path.into(), Node::Dir);
        self
    }

    /// Add a file.
    pub fn file(mut self, path: impl Into<PathBuf>) -> MemFs {
        self.entries.insert(path.into(), Node::File);
        self
    }

    /// Add a file with no execute bit (a data file).
    pub fn data_file(mut self, path: impl Into<PathBuf>) -> MemFs {
        let path = path.into();
        self.not_executable.insert(path.clone());
        self.entries.insert(path, Node::File);
        self
    }

    /// Add a symlink at `path` pointing to `target` (as written).
    pub fn symlink(mut self, path: impl Into<PathBuf>, target: impl Into<PathBuf>) -> MemFs {
        self.entries
            .insert(path.into(), Node::Symlink(target.into()));
        self
    }
}

impl FsView for MemFs {
    fn lstat(&self, path: &Path) -> io::Result<Node> {
        if path == Path::new("/") {
            return Ok(Node::Dir);
        }
        if let Some(node) = self.entries.get(path) {
            return Ok(node.clone());
        }
        // An ancestor of an entry is a directory, unless the walk to it
        // crosses a non-directory entry (then the path does not exist).
        let crosses_non_dir = path
            .ancestors()
            .skip(1)
            .any(|a| matches!(self.entries.get(a), Some(Node::File | Node::Symlink(_))));
        let has_descendant = self
            .entries
            .range(path.to_path_buf()..)
            .take_while(|(p, _)| p.starts_with(path))
            .any(|(p, _)| p != path);
        Ok(if has_descendant && !crosses_non_dir {
            Node::Dir
        } else {
            Node::Missing
        })
    }

    /// Files are executable unless added with [`MemFs::data_file`].
    fn executable(&self, path: &Path) -> io::Result<bool> {
        Ok(!self.not_executable.contains(path))
    }
}
