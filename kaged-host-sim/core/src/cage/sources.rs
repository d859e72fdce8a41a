//! Bind sources opened once, without following a link (ADDENDUM §16:
//! "a bind source is resolved once, in the host, without following a link
//! out of its declared root, and the cage mounts what was resolved").
//!
//! The compiler resolves every bind's source to a path with no symlink in
//! it ([`super::resolve`]). Just before bwrap starts, the spawner opens each
//! source with `openat2(O_PATH, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`
//! from `/`, and hands bwrap the descriptor (`--bind-fd`, `--ro-bind-fd`,
//! bubblewrap ≥ 0.7), which mounts that very inode: a path swapped for a
//! symlink between compile and spawn fails the open (the plugin does not
//! start), and one swapped after the open changes nothing (the moved
//! directory is what the cage gets). bwrap closes each descriptor once it
//! is mounted, so the plugin inherits none of them.
//!
//! A source that was missing at compile time (the `-try` binds) is opened
//! the same way: still missing, the bind is left out (as bwrap's `-try`
//! form did); present now, with no link in its path, it is bound.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::path::Path;

use rustix::fs::{Mode as FileMode, OFlags, ResolveFlags, CWD};

use super::bwrap::BindSource;
use super::error::CageError;
use super::policy::{CagePolicy, Mount};

/// Open `path` (absolute, symlinks already resolved) as an `O_PATH`
/// descriptor, refusing any symlink on the way (`ELOOP`) and any magic
/// link. On a kernel without `openat2` (before 5.6) the path is walked
/// component by component with `O_PATH | O_NOFOLLOW`, which refuses the
/// same links.
pub fn open_no_links(path: &Path) -> io::Result<OwnedFd> {
    // Not O_NOFOLLOW: with O_PATH it would open a final symlink itself
    // instead of failing (openat2(2)).
    let flags = OFlags::PATH | OFlags::CLOEXEC;
    let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(CWD, path, flags, FileMode::empty(), resolve) {
        Err(rustix::io::Errno::NOSYS) => walk_no_links(path),
        other => other.map_err(io::Error::from),
    }
}

/// The pre-5.6 fallback of [`open_no_links`]: one `openat(O_PATH |
/// O_NOFOLLOW)` per component, each relative to the last.
fn walk_no_links(path: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::PATH | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let mut dir = rustix::fs::open("/", flags | OFlags::DIRECTORY, FileMode::empty())?;
    for part in path.components().skip(1) {
        let next = rustix::fs::openat(&dir, part.as_os_str(), flags, FileMode::empty())?;
        if rustix::fs::fstat(&next)?.st_mode & 0o170000 == 0o120000 {
            return Err(io::Error::from_raw_os_error(libc_eloop()));
        }
        dir = next;
    }
    Ok(dir)
}

fn libc_eloop() -> i32 {
    rustix::io::Errno::LOOP.raw_os_error()
}

/// The descriptors of a policy's binds, one per [`Mount::Bind`] that is
/// there now and one for a [`Mount::HostsFile`] (its content, generated
/// now), in the order of [`CagePolicy::mounts`].
#[derive(Debug, Default)]
pub struct OpenedBinds {
    /// Per mount index: the descriptor, or `None` (not a bind, or a
    /// missing source left out).
    fds: Vec<Option<OwnedFd>>,
}

impl OpenedBinds {
    /// Open every bind source of `policy` ([`open_no_links`]). A source
    /// that is not there any more, or that now has a link in its path,
    /// fails with [`CageError::SourceChanged`]; a source that was missing
    /// at compile time and still is, is left out.
    pub fn open(policy: &CagePolicy) -> Result<OpenedBinds, CageError> {
        let mut fds = Vec::with_capacity(policy.mounts.len());
        for m in &policy.mounts {
            if let Mount::HostsFile { .. } = m {
                fds.push(Some(hosts_fd(policy)?));
                continue;
            }
            let Mount::Bind {
                source,
                missing,
                because,
                ..
            } = m
            else {
                fds.push(None);
                continue;
            };
            match open_no_links(source) {
                Ok(fd) => fds.push(Some(fd)),
                Err(e) if *missing && e.kind() == io::ErrorKind::NotFound => fds.push(None),
                Err(e) => {
                    return Err(CageError::SourceChanged {
                        because: because.join(", "),
                        path: source.clone(),
                        source: e,
                    })
                }
            }
        }
        Ok(OpenedBinds { fds })
    }

    /// The descriptor number each bind gets in bwrap's process: `first`,
    /// `first + 1`, ... in mount order; `None` for mounts that are not
    /// binds and for missing sources left out.
    pub fn slots(&self, first: RawFd) -> Vec<Option<RawFd>> {
        let mut next = first;
        self.fds
            .iter()
            .map(|fd| {
                fd.as_ref().map(|_| {
                    let slot = next;
                    next += 1;
                    slot
                })
            })
            .collect()
    }

    /// [`OpenedBinds::slots`] as bwrap's [`BindSource`]s.
    pub fn fd_sources(&self, first: RawFd) -> Vec<Option<BindSource>> {
        self.slots(first)
            .into_iter()
            .map(|s| s.map(BindSource::Fd))
            .collect()
    }

    /// `(descriptor in this process, slot in bwrap's)` of every open
    /// source, for the spawner to place (see [`OpenedBinds::slots`]).
    pub fn placements(&self, first: RawFd) -> Vec<(RawFd, RawFd)> {
        self.placements_where(first, |_| true)
    }

    /// [`OpenedBinds::placements`] of the mounts (by index in the policy)
    /// `keep` keeps: with staged binds (`cage::stage`), only the hosts
    /// file's content still goes to bwrap by descriptor.
    pub fn placements_where(
        &self,
        first: RawFd,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<(RawFd, RawFd)> {
        self.fds
            .iter()
            .zip(self.slots(first))
            .enumerate()
            .filter(|(i, _)| keep(*i))
            .filter_map(|(_, (fd, slot))| Some((fd.as_ref()?.as_raw_fd(), slot?)))
            .collect()
    }

    /// Per mount of the policy, in order: the open descriptor, or `None`.
    /// (A caller that spawns bwrap itself, without the spawner, passes
    /// these numbers as they are, made inheritable.)
    pub fn descriptors(&self) -> Vec<Option<BorrowedFd<'_>>> {
        self.fds
            .iter()
            .map(|fd| fd.as_ref().map(|f| f.as_fd()))
            .collect()
    }
}

/// The content of a filtered cage's `/etc/hosts`, in a sealed memory
/// file (no path anyone could write, no size limit), read from its start
/// by bwrap (`--ro-bind-data`).
fn hosts_fd(policy: &CagePolicy) -> Result<OwnedFd, CageError> {
    use rustix::fs::{MemfdFlags, SealFlags};
    let fail = |e: rustix::io::Errno| CageError::Setup {
        what: "the cage's hosts file",
        source: e.into(),
    };
    let text = super::net_grants::hosts_file(&policy.net.stand_ins);
    let fd = rustix::fs::memfd_create(
        "kaged-hosts",
        MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
    )
    .map_err(fail)?;
    let mut rest = text.as_bytes();
    while !rest.is_empty() {
        let n = rustix::io::write(&fd, rest).map_err(fail)?;
        rest = rest.get(n..).unwrap_or_default();
    }
    rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(0)).map_err(fail)?;
    rustix::fs::fcntl_add_seals(
        &fd,
        SealFlags::WRITE | SealFlags::GROW | SealFlags::SHRINK | SealFlags::SEAL,
    )
    .map_err(fail)?;
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_anywhere_in_the_path_is_refused() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("real")).unwrap();
        std::os::unix::fs::symlink("real", t.path().join("link")).unwrap();
        assert!(open_no_links(&t.path().join("real")).is_ok());
        let e = open_no_links(&t.path().join("link")).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc_eloop()), "{e}");
        let e = walk_no_links(&t.path().join("link")).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc_eloop()), "{e}");
        std::fs::create_dir(t.path().join("real/sub")).unwrap();
        let e = open_no_links(&t.path().join("link/sub")).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc_eloop()), "{e}");
        let e = walk_no_links(&t.path().join("link/sub")).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc_eloop()), "{e}");
        assert!(walk_no_links(&t.path().join("real/sub")).is_ok());
    }
}
