//! Running the cage as the plugin's own uid when the host is root
//! (ADDENDUM §16: "the plugin never runs as the host's root"; see
//! [`super::user`]).
//!
//! bwrap run by an unprivileged user does its setup as that user: it
//! could not reach a bind source under a directory only root may enter (a
//! `0700` temporary directory, `/root`), even by descriptor. So the
//! spawner stages the sources first, as root, where bwrap can reach them
//! and nothing else can change them:
//!
//! ```text
//!  host (root)                      spawn child (root → plugin id)            bwrap (plugin id)
//!  open each source, no links  ──▶  unshare(CLONE_NEWNS), / private      ──▶  --bind /tmp/N DEST
//!  open_tree(CLONE) per source      tmpfs on /tmp (its own namespace)          (own user namespace)
//!  (+ idmap OWNER→ID, grants)       move_mount each copy to /tmp/N
//!                                   cgroup, rlimits, then setgroups([]),
//!                                   setresgid(ID), setresuid(ID)
//! ```
//!
//! The staging tmpfs exists only in the child's mount namespace, which no
//! other process shares, and it holds copies of the very inodes the host
//! opened (`cage::sources`): no path is resolved twice, so a plugin
//! racing its grants changes nothing. Grants and the install directory
//! are idmapped ([`super::idmap`]) so that the plugin, as its own uid,
//! reads and writes what it was granted; the system runtime and the `/etc`
//! files are bound as they are.

use std::ffi::CString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;

use rustix::fs::{Mode as FileMode, OFlags, CWD};
use rustix::mount::{MountFlags, MountPropagationFlags, MoveMountFlags};

use super::base::{BECAUSE_ETC, BECAUSE_NETWORK, BECAUSE_SYSTEM};
use super::error::CageError;
use super::idmap::{clone_tree, facts_of, idmapped_tree, IdMap, SourceFacts};
use super::policy::{CagePolicy, Mount};
use super::sources::OpenedBinds;

/// Where the child mounts its staging tmpfs: over `/tmp`, in its own
/// mount namespace only (bwrap gives the cage a `/tmp` of its own).
pub const STAGE_DIR: &str = "/tmp";

/// One staged source.
struct Entry {
    tree: OwnedFd,
    target: CString,
    dir: bool,
}

/// A policy's bind sources, copied and ready for the child to stage.
pub struct Staging {
    id: u32,
    entries: Vec<Entry>,
    /// Per mount of the policy: where bwrap finds its source (`None`: not
    /// a bind, or a missing source left out).
    paths: Vec<Option<PathBuf>>,
    /// Sources that could not be idmapped (path, why): the plugin has only
    /// the rights of its uid there.
    pub not_idmapped: Vec<(PathBuf, String)>,
}

impl Staging {
    /// Copy every opened source of `policy` for the plugin id `id`.
    pub fn prepare(
        policy: &CagePolicy,
        binds: &OpenedBinds,
        id: u32,
    ) -> Result<Staging, CageError> {
        let base = [BECAUSE_SYSTEM, BECAUSE_ETC, BECAUSE_NETWORK];
        let mut staging = Staging {
            id,
            entries: Vec::new(),
            paths: Vec::new(),
            not_idmapped: Vec::new(),
        };
        for (m, fd) in policy.mounts.iter().zip(binds.descriptors()) {
            let (
                Mount::Bind {
                    source, because, ..
                },
                Some(fd),
            ) = (m, fd)
            else {
                staging.paths.push(None);
                continue;
            };
            let failed = |e: io::Error| CageError::Stage {
                path: source.clone(),
                source: e,
            };
            let SourceFacts { dir, owner, mode } = facts_of(fd).map_err(failed)?;
            let system = because.iter().all(|b| base.contains(&b.as_str()));
            let tree = if system || owner == (id, id) {
                clone_tree(fd).map_err(failed)?
            } else {
                match idmapped_tree(
                    fd,
                    IdMap {
                        owner,
                        to: (id, id),
                    },
                ) {
                    Ok(tree) => tree,
                    Err(e) => {
                        // Bound as it is, the plugin reaches it only through
                        // the "other" permission bits: say so now rather
                        // than let bwrap or the plugin fail on EACCES.
                        if let Some(why) = closed_to_others(mode, dir, &e) {
                            return Err(failed(io::Error::other(why)));
                        }
                        staging.not_idmapped.push((source.clone(), e.to_string()));
                        clone_tree(fd).map_err(failed)?
                    }
                }
            };
            let path = PathBuf::from(format!("{STAGE_DIR}/{}", staging.entries.len()));
            let target = CString::new(path.as_os_str().as_encoded_bytes())
                .map_err(|e| failed(io::Error::other(e)))?;
            staging.entries.push(Entry { tree, target, dir });
            staging.paths.push(Some(path));
        }
        Ok(staging)
    }

    /// Per mount of the policy, where bwrap finds the staged source.
    pub fn paths(&self) -> &[Option<PathBuf>] {
        &self.paths
    }

    /// The plugin's id (uid and gid).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// In the child, between fork and exec (system calls only, no
    /// allocation): a mount namespace of its own, a tmpfs over
    /// [`STAGE_DIR`], and each copy moved to its place there.
    pub fn enter(&self) -> io::Result<()> {
        // SAFETY: the child is single-threaded; a new mount namespace
        // affects it alone.
        unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNS)? };
        rustix::mount::mount_change(
            c"/",
            MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
        )?;
        rustix::mount::mount(
            c"tmpfs",
            c"/tmp",
            c"tmpfs",
            MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
            c"mode=0755",
        )?;
        for e in &self.entries {
            if e.dir {
                rustix::fs::mkdir(e.target.as_c_str(), FileMode::from_raw_mode(0o755))?;
            } else {
                let f = rustix::fs::open(
                    e.target.as_c_str(),
                    OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC,
                    FileMode::from_raw_mode(0o644),
                )?;
                drop(f);
            }
            rustix::mount::move_mount(
                &e.tree,
                c"",
                CWD,
                e.target.as_c_str(),
                MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
            )?;
        }
        Ok(())
    }
}

/// Why a source that could not be idmapped (`idmap_error`) stays out of
/// the plugin's reach, bound as it is: its "other" bits do not let another
/// user enter the directory (`r-x`) or read the file (`r--`). `None`: they
/// do.
fn closed_to_others(mode: u32, dir: bool, idmap_error: &io::Error) -> Option<String> {
    let needed = if dir { 0o005 } else { 0o004 };
    (mode & needed != needed).then(|| {
        format!(
            "its filesystem has no idmapped mounts ({idmap_error}), and other users cannot {} \
             it (mode {:o}); make it readable by others (chmod o+{}) or run the host as an \
             ordinary user",
            if dir { "enter" } else { "read" },
            mode & 0o7777,
            if dir { "rx" } else { "r" },
        )
    })
}

/// In the child, last of what needs root: no supplementary groups, then
/// the plugin's gid and uid (real, effective and saved), which also drops
/// every capability.
pub fn become_id(id: u32) -> io::Result<()> {
    use rustix::process::{Gid, Uid};
    let (uid, gid) = (Uid::from_raw(id), Gid::from_raw(id));
    rustix::thread::set_thread_groups(&[])?;
    rustix::thread::set_thread_res_gid(gid, gid, gid)?;
    rustix::thread::set_thread_res_uid(uid, uid, uid)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_closed_to_others_is_refused_when_it_cannot_be_idmapped() {
        let e = io::Error::from_raw_os_error(rustix::io::Errno::INVAL.raw_os_error());
        let why = closed_to_others(0o40700, true, &e).expect("refused");
        assert!(
            why.contains("(mode 700)") && why.contains("chmod o+rx"),
            "{why}"
        );
        assert!(closed_to_others(0o40755, true, &e).is_none());
        assert!(closed_to_others(0o40751, true, &e).is_some());
        assert!(closed_to_others(0o100600, false, &e).is_some());
        assert!(closed_to_others(0o100644, false, &e).is_none());
    }
}
