//! Detached copies of bind sources, idmapped to the plugin's own id
//! (`cage::stage`): a grant owned by the host's root (or another user)
//! shows, in the cage, as the plugin's own, so the plugin reads and writes
//! what it was granted without running as its owner; what it writes is
//! stored with the owner's ids.
//!
//! A copy is `open_tree(OPEN_TREE_CLONE | AT_RECURSIVE)` of the descriptor
//! the host opened without following links (`cage::sources`), so it is the
//! very inode that was checked. The idmapping is a user namespace whose
//! only map line is `OWNER ID 1` (for uids, and the owner's gid for gids),
//! attached with `mount_setattr(MOUNT_ATTR_IDMAP)` (Linux 5.12; the
//! filesystem must support it: ext4, xfs, btrfs, tmpfs from 6.3, overlayfs
//! from 5.19). Ids other than the owner's show as the overflow id (65534).
//!
//! Making that user namespace takes a process: one is forked, enters a new
//! user namespace, has its maps written by the host, and exits once the
//! host holds the namespace's descriptor. Namespaces are cached per
//! `(owner, id)` for the life of the host process.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, Mutex};

use rustix::mount::{open_tree, OpenTreeFlags};

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `MOUNT_ATTR_IDMAP`.
const MOUNT_ATTR_IDMAP: u64 = 0x0010_0000;

/// Who owns a source, and who it is mapped to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IdMap {
    /// The source's owner (uid, gid) on disk.
    pub owner: (u32, u32),
    /// The plugin's (uid, gid).
    pub to: (u32, u32),
}

/// A detached copy of `source` (the whole tree under it), not mapped.
pub fn clone_tree(source: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    let flags = OpenTreeFlags::OPEN_TREE_CLONE
        | OpenTreeFlags::OPEN_TREE_CLOEXEC
        | OpenTreeFlags::AT_EMPTY_PATH
        | OpenTreeFlags::AT_RECURSIVE;
    Ok(open_tree(source, c"", flags)?)
}

/// A detached copy of `source` with `map` applied to it and every mount
/// under it. Fails (and nothing is kept) where the kernel or the
/// filesystem has no idmapped mounts.
pub fn idmapped_tree(source: BorrowedFd<'_>, map: IdMap) -> io::Result<OwnedFd> {
    let tree = clone_tree(source)?;
    let userns = userns_for(map)?;
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_IDMAP,
        attr_clr: 0,
        propagation: 0,
        userns_fd: userns.as_raw_fd() as u64,
    };
    // SAFETY: a plain system call on descriptors this function owns, with
    // a pointer to a struct that lives across the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH | libc::AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(tree)
}

type Cache = HashMap<IdMap, Arc<OwnedFd>>;
static USERNS: Mutex<Option<Cache>> = Mutex::new(None);

/// The user namespace of `map`, made once per host process.
fn userns_for(map: IdMap) -> io::Result<Arc<OwnedFd>> {
    let mut g = USERNS.lock().unwrap_or_else(|p| p.into_inner());
    let cache = g.get_or_insert_with(HashMap::new);
    if let Some(fd) = cache.get(&map) {
        return Ok(fd.clone());
    }
    let fd = Arc::new(make_userns(map)?);
    cache.insert(map, fd.clone());
    Ok(fd)
}

/// Fork a process into a new user namespace, write its maps, keep a
/// descriptor of the namespace, and let the process exit.
fn make_userns(map: IdMap) -> io::Result<OwnedFd> {
    let (ready_r, ready_w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let (done_r, done_w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let (rr, rw) = (ready_r.as_raw_fd(), ready_w.as_raw_fd());
    let (dr, dw) = (done_r.as_raw_fd(), done_w.as_raw_fd());
    // SAFETY: the child only makes system calls (unshare, write, read,
    // _exit): nothing that allocates or takes a lock, as a child of a
    // multi-threaded process must.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: see above; the child never returns. It closes its copies
        // of the ends it does not use, or it would never see the host's
        // end of `done` close.
        unsafe {
            libc::close(rr);
            libc::close(dw);
            let ok: u8 = u8::from(libc::unshare(libc::CLONE_NEWUSER) == 0);
            libc::write(rw, (&ok as *const u8).cast(), 1);
            let mut b = 0u8;
            libc::read(dr, (&mut b as *mut u8).cast(), 1);
            libc::_exit(0);
        }
    }
    drop(ready_w);
    drop(done_r);
    let answer = (|| {
        let mut ok = [0u8];
        let n = rustix::io::read(
            // SAFETY: `ready_r` is open until the end of this function.
            unsafe { BorrowedFd::borrow_raw(rr) },
            &mut ok,
        )?;
        if n != 1 || ok[0] != 1 {
            return Err(io::Error::other(
                "the helper process could not enter a new user namespace",
            ));
        }
        let proc = format!("/proc/{pid}");
        std::fs::write(
            format!("{proc}/uid_map"),
            format!("{} {} 1\n", map.owner.0, map.to.0),
        )?;
        std::fs::write(
            format!("{proc}/gid_map"),
            format!("{} {} 1\n", map.owner.1, map.to.1),
        )?;
        let ns = std::fs::File::open(format!("{proc}/ns/user"))?;
        Ok(OwnedFd::from(ns))
    })();
    drop(done_w);
    drop(ready_r);
    let mut status = 0;
    // SAFETY: reaping the child forked above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    answer
}

/// What a source is, for staging: whether a directory, its owner (for the
/// idmap) and its mode bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceFacts {
    /// A directory (else a file).
    pub dir: bool,
    /// Owner (uid, gid) on disk.
    pub owner: (u32, u32),
    /// `st_mode`.
    pub mode: u32,
}

/// [`SourceFacts`] of `fd`, from one `fstat`.
pub fn facts_of(fd: BorrowedFd<'_>) -> io::Result<SourceFacts> {
    let st = rustix::fs::fstat(fd)?;
    Ok(SourceFacts {
        dir: st.st_mode & 0o170000 == 0o040000,
        owner: (st.st_uid, st.st_gid),
        mode: st.st_mode,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn an_idmapped_tree_shows_the_owner_as_the_plugin() {
        if !rustix::process::geteuid().is_root() {
            return;
        }
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("f"), "x").unwrap();
        let src = crate::cage::open_no_links(t.path()).unwrap();
        let facts = facts_of(src.as_fd()).unwrap();
        assert!(facts.dir);
        let owner = facts.owner;
        let map = IdMap {
            owner,
            to: (1_900_000_001, 1_900_000_001),
        };
        let tree = match idmapped_tree(src.as_fd(), map) {
            Ok(t) => t,
            // A filesystem without idmapped mounts: nothing to check here.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return,
            Err(e) => panic!("{e}"),
        };
        let f = rustix::fs::openat(
            &tree,
            c"f",
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        let st = rustix::fs::fstat(&f).unwrap();
        assert_eq!((st.st_uid, st.st_gid), map.to);
        // The same namespace serves the next copy.
        let a = userns_for(map).unwrap();
        let b = userns_for(map).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
    }
}
