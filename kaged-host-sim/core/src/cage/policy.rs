//! The cage policy: what a plugin may touch, in the shape of plugin-host.md
//! § Capability → cage policy translation (fs, net, exec, state, seccomp,
//! cgroup), made concrete (ADDENDUM §13): the ordered list of mounts bwrap
//! performs, the environment, the working directory.
//!
//! Serialisable for `kaged-host-sim cage --json`; [`CagePolicy::render`]
//! (in `render.rs`) is the human form, [`CagePolicy::bwrap_argv`] (in
//! `bwrap.rs`) the command line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::cgroup::CgroupPolicy;
use super::landlock_layer::LandlockPolicy;
use super::limits::CageLimits;
use super::net_grants::StandIn;
use super::seccomp::SeccompPolicy;
use super::user::CageUser;

/// Read-only or read-write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Read-only (`--ro-bind`).
    Ro,
    /// Read-write (`--bind`).
    Rw,
}

/// One filesystem operation of the cage, in the order bwrap performs them
/// (a later mount covers an earlier one at or above its destination).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mount {
    /// A fresh procfs (`--proc`).
    Proc {
        /// Where.
        dest: PathBuf,
    },
    /// A minimal `/dev` (`--dev`: null, zero, full, random, urandom, tty).
    Dev {
        /// Where.
        dest: PathBuf,
    },
    /// An empty tmpfs (`--tmpfs`; `--size` first when sized).
    Tmpfs {
        /// Where.
        dest: PathBuf,
        /// Its size in bytes (`None`: bwrap's default, half of RAM).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
    },
    /// A kernel interface of the cage's `/proc`, bound read-only over
    /// itself (`--ro-bind P P`; see `cage::kernel`).
    KernelReadOnly {
        /// Where (the same path on the host).
        dest: PathBuf,
    },
    /// A kernel interface masked: a file by `/dev/null`, a directory by an
    /// empty tmpfs remounted read-only.
    Masked {
        /// Where.
        dest: PathBuf,
        /// A directory (tmpfs) or a file (`/dev/null`).
        dir: bool,
    },
    /// A host root of grants (`config:/`, `project:/`) that would
    /// otherwise fall inside one of the cage's writable tmpfs (a run's
    /// temporary config root under `/tmp`): an empty tmpfs remounted
    /// read-only, so that a write the plugin holds no grant for fails
    /// (`EROFS`) as it does in the daemon's cage instead of landing in
    /// scratch space that is lost at exit. Grants under it are bound over
    /// it.
    Sealed {
        /// Where (the same path on the host).
        dest: PathBuf,
    },
    /// The generated `/etc/hosts` of a filtered network (the granted names
    /// at their stand-in addresses: `super::net_grants`), copied by bwrap
    /// from a sealed memory file the host fills at spawn
    /// (`--ro-bind-data FD DEST`): never a path the plugin could write.
    HostsFile {
        /// Where (`/etc/hosts`).
        dest: PathBuf,
    },
    /// A symlink, as on the host (`--symlink`: `/bin -> usr/bin`).
    Symlink {
        /// The link's target as written on the host.
        target: PathBuf,
        /// Where.
        dest: PathBuf,
    },
    /// A bind of a host path (`--ro-bind`, `--bind`; `-try` when missing).
    Bind {
        /// The host path (symlinks resolved).
        source: PathBuf,
        /// The path inside the cage.
        dest: PathBuf,
        /// Read-only or read-write.
        mode: Mode,
        /// The source did not exist when the cage was compiled: bound with
        /// the `-try` form, which bwrap skips when the source is missing.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        missing: bool,
        /// Why it is there: `system`, `etc`, `network`, `install dir`,
        /// `command`, or the capabilities that grant it.
        because: Vec<String>,
    },
}

impl Mount {
    /// The path inside the cage.
    pub fn dest(&self) -> &Path {
        match self {
            Mount::Proc { dest }
            | Mount::Dev { dest }
            | Mount::Tmpfs { dest, .. }
            | Mount::KernelReadOnly { dest }
            | Mount::Masked { dest, .. }
            | Mount::Sealed { dest }
            | Mount::Symlink { dest, .. }
            | Mount::HostsFile { dest }
            | Mount::Bind { dest, .. } => dest,
        }
    }

    /// Order among mounts of the same destination: kernel views and tmpfs
    /// first, binds last (so a granted bind covers a tmpfs).
    pub(crate) fn rank(&self) -> u8 {
        match self {
            Mount::Proc { .. } | Mount::Dev { .. } => 0,
            Mount::Tmpfs { .. } | Mount::Sealed { .. } => 1,
            Mount::Symlink { .. } => 2,
            Mount::Bind { .. } | Mount::HostsFile { .. } => 3,
            Mount::KernelReadOnly { .. } | Mount::Masked { .. } => 4,
        }
    }
}

/// The cage's network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetMode {
    /// A new, empty network namespace: loopback only, inside the cage.
    None,
    /// The host's network namespace (`--share-net`): `net:*`.
    Shared,
    /// A new, empty network namespace whose `connect(2)` calls the host
    /// intercepts (seccomp user notification) and makes itself when a
    /// grant allows them (`net:HOST:PORT`, `net:HOST:*`: `super::net_filter`).
    Filtered,
}

/// The network part of a cage policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetPolicy {
    /// None, shared or filtered.
    pub mode: NetMode,
    /// The declared targets (`api.example.com:443`, `localhost:*`, `*`).
    pub grants: Vec<String>,
    /// What is enforced, in one sentence, when there is a network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filtering: Option<String>,
    /// Filtered: each granted host name and its stand-in address in the
    /// cage's `/etc/hosts`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stand_ins: Vec<StandIn>,
}

/// What a filtered network enforces ([`NetMode::Filtered`]; ADDENDUM §16,
/// issue 45), for [`NetPolicy::filtering`] and the cage description.
pub const NET_FILTERED: &str =
    "filtered: the cage has its own network namespace (no host loopback service, no host \
     abstract unix socket) and no DNS (granted names resolve through the cage's /etc/hosts \
     to stand-in addresses); a TCP connect to a granted host and port is made by the host \
     and the connected socket handed to the plugin; any other connect outside the cage's \
     own loopback, link-local addresses (169.254.0.0/16, fe80::/10) unless a grant names \
     them, and every UDP connect fail at once with ECONNREFUSED";

/// What `net:*` enforces ([`NetMode::Shared`]).
pub const NET_SHARED: &str =
    "shared: net:* grants every host and port; the host's network namespace is the cage's \
     (the host's loopback services too); only the Landlock scopes below apply";

/// One `exec:BIN:P` grant, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecGrant {
    /// The capability, canonical.
    pub capability: String,
    /// The binary as declared.
    pub binary: String,
    /// Where it was found (`None`: not found, not bound).
    pub binary_path: Option<PathBuf>,
    /// The working directory it is granted (bound read-write).
    pub workdir: PathBuf,
}

/// What a path inside the cage is, given the mounts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Not in the cage.
    Hidden,
    /// Read-only bind.
    ReadOnly,
    /// Read-write bind.
    ReadWrite,
    /// A fresh tmpfs, writable, empty at start, gone at exit.
    Scratch,
    /// The cage's own `/proc` or `/dev`.
    Kernel,
}

/// A compiled cage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CagePolicy {
    /// Every mount, in order.
    pub mounts: Vec<Mount>,
    /// The network.
    pub net: NetPolicy,
    /// The `exec:` grants.
    pub exec: Vec<ExecGrant>,
    /// The working directory (the install directory).
    pub chdir: PathBuf,
    /// Who the plugin runs as (ADDENDUM §16: never the host's root).
    #[serde(default)]
    pub user: CageUser,
    /// The whole environment (after `--clearenv`).
    pub env: BTreeMap<String, String>,
    /// Mounts made read-only after every other mount, in order: the
    /// masked directories, `/dev`, and last `/` (the cage root: only
    /// `/tmp`, `/dev/shm` and the read-write binds stay writable).
    #[serde(default)]
    pub remount_ro: Vec<PathBuf>,
    /// The tmpfs sizes and rlimits.
    pub limits: CageLimits,
    /// Always `ephemeral` for plugins.
    pub state: String,
    /// The seccomp profile.
    pub seccomp: SeccompPolicy,
    /// The cgroup limits and whether they are applied.
    pub cgroup: CgroupPolicy,
    /// The Landlock layer: TCP ports, scopes (issue 45).
    #[serde(default)]
    pub landlock: LandlockPolicy,
    /// What an author should know (missing paths, ignored grants...).
    pub notes: Vec<String>,
}

impl CagePolicy {
    /// What `path` (absolute, normalised) is inside the cage: the last mount
    /// at or above it decides; a symlink mount is followed (at most 40
    /// times); a bind whose source was missing covers nothing.
    pub fn access(&self, path: &Path) -> Access {
        let mut path = path.to_path_buf();
        for _ in 0..40 {
            let top = self.mounts.iter().rev().find(|m| {
                path.starts_with(m.dest()) && !matches!(m, Mount::Bind { missing: true, .. })
            });
            match top {
                None | Some(Mount::Sealed { .. }) => return Access::Hidden,
                Some(
                    Mount::Proc { .. }
                    | Mount::Dev { .. }
                    | Mount::KernelReadOnly { .. }
                    | Mount::Masked { .. },
                ) => return Access::Kernel,
                Some(Mount::Tmpfs { .. }) => return Access::Scratch,
                Some(Mount::Bind { mode: Mode::Ro, .. } | Mount::HostsFile { .. }) => {
                    return Access::ReadOnly
                }
                Some(Mount::Bind { mode: Mode::Rw, .. }) => return Access::ReadWrite,
                Some(Mount::Symlink { target, dest }) => {
                    let rest = path.strip_prefix(dest).unwrap_or(Path::new(""));
                    let base = dest.parent().unwrap_or(Path::new("/")).join(target);
                    path = super::resolve::normalize(&base.join(rest));
                }
            }
        }
        Access::Hidden
    }

    /// Whether the network namespace is shared.
    pub fn shares_network(&self) -> bool {
        self.net.mode == NetMode::Shared
    }

    /// Whether the plugin's `connect(2)` calls go through the host
    /// ([`NetMode::Filtered`]).
    pub fn filters_network(&self) -> bool {
        self.net.mode == NetMode::Filtered
    }
}
