//! Path resolution at cage-compile time (plugin-host.md § Paths: "Symlinks
//! are resolved at cage-compile time; the resolved path must be within the
//! declared capability"), over a [`FsView`] so that it is pure.
//!
//! [`normalize`] is lexical (`.` dropped, `..` pops, never above `/`);
//! [`resolve`] follows every symlink like `realpath(3)`, but a path that
//! does not exist (yet) still resolves: its existing prefix is resolved and
//! the missing rest appended, so that a missing path under a symlinked
//! directory is still recognised as leaving the declared path.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::fs_view::{FsView, Node};

/// At most this many symlinks are followed (as Linux's `MAXSYMLINKS`).
pub const MAX_SYMLINKS: usize = 40;

/// A resolved path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The path with every symlink of its existing prefix followed.
    pub path: PathBuf,
    /// Whether the whole path exists.
    pub exists: bool,
    /// Whether it is a directory (false when missing).
    pub is_dir: bool,
}

/// Why a path could not be resolved.
#[derive(Debug)]
pub enum ResolveFailure {
    /// More than `MAX_SYMLINKS` (40) symlinks.
    Loop,
    /// `lstat` failed on this path.
    Io(PathBuf, io::Error),
}

/// The lexical normal form of an absolute path: `/` + normal components,
/// `.` dropped, `..` removing the component before it (never above `/`).
/// A relative path is taken from `/`.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

fn parts(path: &Path) -> impl Iterator<Item = OsString> + '_ {
    path.components().filter_map(|c| match c {
        Component::Normal(n) => Some(n.to_os_string()),
        Component::ParentDir => Some(OsString::from("..")),
        _ => None,
    })
}

/// Follow every symlink of `path` (absolute) on `fs`.
pub fn resolve(fs: &dyn FsView, path: &Path) -> Result<Resolved, ResolveFailure> {
    let mut pending: VecDeque<OsString> = parts(&normalize(path)).collect();
    let mut cur = PathBuf::from("/");
    let mut is_dir = true;
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            cur.pop();
            is_dir = true;
            continue;
        }
        let next = cur.join(&part);
        match fs
            .lstat(&next)
            .map_err(|e| ResolveFailure::Io(next.clone(), e))?
        {
            Node::Dir => {
                cur = next;
                is_dir = true;
            }
            Node::File => {
                cur = next;
                is_dir = false;
            }
            Node::Symlink(target) => {
                links += 1;
                if links > MAX_SYMLINKS {
                    return Err(ResolveFailure::Loop);
                }
                if target.is_absolute() {
                    cur = PathBuf::from("/");
                }
                for p in parts(&target).collect::<Vec<_>>().into_iter().rev() {
                    pending.push_front(p);
                }
            }
            Node::Missing => {
                let mut rest = next;
                for p in pending {
                    rest.push(p);
                }
                return Ok(Resolved {
                    path: normalize(&rest),
                    exists: false,
                    is_dir: false,
                });
            }
        }
    }
    Ok(Resolved {
        path: cur,
        exists: true,
        is_dir,
    })
}

/// Whether `resolved` stays within `declared` (component-wise prefix).
pub fn within(resolved: &Path, declared: &Path) -> bool {
    resolved.starts_with(declared)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cage::fs_view::MemFs;

    fn fs() -> MemFs {
        MemFs::new()
            .dir("/usr/bin")
            .file("/usr/bin/python3.11")
            .symlink("/usr/bin/python3", "python3.11")
            .symlink("/bin", "usr/bin")
            .dir("/srv/data")
            .symlink("/opt/link", "/srv/data")
            .symlink("/opt/up", "../srv")
            .symlink("/loop/a", "b")
            .symlink("/loop/b", "a")
    }

    #[test]
    fn normalize_is_lexical() {
        assert_eq!(normalize("/a/./b/../c/".as_ref()), PathBuf::from("/a/c"));
        assert_eq!(normalize("/../..".as_ref()), PathBuf::from("/"));
    }

    #[test]
    fn symlinks_are_followed_relative_and_absolute() {
        let r = resolve(&fs(), "/bin/python3".as_ref()).unwrap();
        assert_eq!(r.path, PathBuf::from("/usr/bin/python3.11"));
        assert!(r.exists && !r.is_dir);
        let r = resolve(&fs(), "/opt/up/data".as_ref()).unwrap();
        assert_eq!(r.path, PathBuf::from("/srv/data"));
        assert!(r.is_dir);
    }

    #[test]
    fn a_missing_rest_is_appended_to_the_resolved_prefix() {
        let r = resolve(&fs(), "/opt/link/new/file".as_ref()).unwrap();
        assert_eq!(r.path, PathBuf::from("/srv/data/new/file"));
        assert!(!r.exists);
        assert!(!within(&r.path, "/opt/link/new/file".as_ref()));
    }

    #[test]
    fn loops_are_reported() {
        assert!(matches!(
            resolve(&fs(), "/loop/a".as_ref()),
            Err(ResolveFailure::Loop)
        ));
    }
}
