//! cgroup limits of a plugin cage (plugin-host.md: memory 512 MiB, cpu
//! shares 256, pids 100; ADDENDUM §13: "where a writable cgroup v2 subtree
//! exists; otherwise the cage description says `cgroup: unavailable`.
//! Never claimed when not applied").
//!
//! Four states, and only the last one claims limits: [`CgroupState::
//! Available`] (detected: a v2 subtree we may write, with the memory, pids
//! and cpu controllers), [`CgroupState::AvailableV1`] (no such v2 subtree,
//! but writable v1 hierarchies of the controllers, as on a hybrid host:
//! the kit goes beyond ADDENDUM §13 there, which names v2 only),
//! [`CgroupState::Unavailable`] (with the reason), [`CgroupState::Applied`]
//! (per-cage cgroups were created and each limit in `applied` was written
//! and accepted by the kernel).
//!
//! cpu shares → cpu.weight: v1 `cpu.shares` (default 1024) becomes v2
//! `cpu.weight` (default 100) proportionally, `weight = shares * 100 /
//! 1024`, clamped to 1..=10000: 256 shares → weight 25, a quarter of a
//! default process either way. (runc's `1 + (shares - 2) * 9999 / 262142`
//! maps the full ranges instead and gives 10, which does not keep the ratio
//! to default processes.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// memory.max of a plugin cage: 512 MiB.
pub const MEMORY_MAX_BYTES: u64 = 512 * 1024 * 1024;
/// pids.max of a plugin cage.
pub const PIDS_MAX: u64 = 100;
/// cpu shares of a plugin cage (cgroup v1 units, as the spec writes them).
pub const CPU_SHARES: u64 = 256;
/// The controllers the limits need.
pub const CONTROLLERS: [&str; 3] = ["memory", "pids", "cpu"];

/// v1 cpu shares → v2 cpu.weight (see the module doc).
pub fn cpu_weight_from_shares(shares: u64) -> u64 {
    (shares.saturating_mul(100) / 1024).clamp(1, 10_000)
}

/// The limits a plugin cage wants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupLimits {
    /// `memory.max`, bytes.
    pub memory_max_bytes: u64,
    /// `pids.max`.
    pub pids_max: u64,
    /// The spec's cpu shares.
    pub cpu_shares: u64,
    /// `cpu.weight`, from the shares.
    pub cpu_weight: u64,
}

impl CgroupLimits {
    /// The spec's per-plugin defaults.
    pub fn plugin_default() -> CgroupLimits {
        CgroupLimits {
            memory_max_bytes: MEMORY_MAX_BYTES,
            pids_max: PIDS_MAX,
            cpu_shares: CPU_SHARES,
            cpu_weight: cpu_weight_from_shares(CPU_SHARES),
        }
    }
}

/// The limits the kernel accepted (`None`: not applied).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedLimits {
    /// `memory.max` (v2) or `memory.limit_in_bytes` (v1) written.
    pub memory_max_bytes: Option<u64>,
    /// `pids.max` written.
    pub pids_max: Option<u64>,
    /// `cpu.weight` written (v2).
    pub cpu_weight: Option<u64>,
    /// `cpu.shares` written (v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_shares: Option<u64>,
}

/// Where the cgroup limits stand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum CgroupState {
    /// A writable v2 subtree with the controllers; nothing applied yet.
    Available {
        /// The cgroup under which cages would be created.
        parent: PathBuf,
    },
    /// No usable v2 subtree, but writable v1 hierarchies for some of the
    /// controllers (a hybrid host); nothing applied yet.
    AvailableV1 {
        /// Controller → the cgroup under which cages would be created.
        parents: BTreeMap<String, PathBuf>,
    },
    /// No limits can be applied here.
    Unavailable {
        /// Why.
        reason: String,
    },
    /// A per-cage cgroup exists; `applied` is what the kernel accepted.
    Applied {
        /// The cage's cgroup directory (v1: the first controller's).
        path: PathBuf,
        /// v1: the cage's directories in the other controllers' hierarchies.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        also: Vec<PathBuf>,
        /// The limits written.
        applied: AppliedLimits,
        /// Limits that could not be written, with the reason.
        failed: Vec<String>,
    },
}

/// The cgroup part of a cage policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupPolicy {
    /// What a plugin cage wants.
    pub wanted: CgroupLimits,
    /// What is (or can be) applied.
    pub state: CgroupState,
}

impl CgroupPolicy {
    /// The default limits in `state`.
    pub fn new(state: CgroupState) -> CgroupPolicy {
        CgroupPolicy {
            wanted: CgroupLimits::plugin_default(),
            state,
        }
    }
}

impl CgroupState {
    /// Every directory of an applied cage cgroup (v2: one; v1: one per
    /// controller); empty otherwise.
    pub fn dirs(&self) -> Vec<&Path> {
        match self {
            CgroupState::Applied { path, also, .. } => std::iter::once(path.as_path())
                .chain(also.iter().map(PathBuf::as_path))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The file the spawner's child writes `0` to, for each of
    /// [`CgroupState::dirs`], to enter the cage's cgroups before bwrap
    /// runs: v1's `tasks` where the directory has one, else `cgroup.procs`.
    ///
    /// The child is single-threaded (just forked), so moving its one
    /// thread moves the whole process. A write of `0` to a v1 `tasks`
    /// file moves the calling thread without taking the kernel's global
    /// `cgroup_threadgroup_rwsem`, whose write side waits out an RCU
    /// grace period (7-14 ms per spawn on a hybrid host, measured with
    /// `strace -T`); a write to `cgroup.procs` takes it. v2 has no
    /// `tasks` (its `cgroup.threads` needs a threaded subtree), so v2
    /// keeps `cgroup.procs`.
    pub fn entry_files(&self) -> Vec<PathBuf> {
        self.dirs()
            .into_iter()
            .map(|dir| {
                let tasks = dir.join("tasks");
                if tasks.exists() {
                    tasks
                } else {
                    dir.join("cgroup.procs")
                }
            })
            .collect()
    }
}

/// Decide from `/proc/self/mountinfo` and `/proc/self/cgroup` texts (and the
/// files under the mounts) where cages can be created, reading only: a
/// usable v2 subtree first, else the v1 hierarchies of the controllers.
pub fn detect_from(mountinfo: &str, proc_self_cgroup: &str) -> CgroupState {
    let v2 = detect_v2(mountinfo, proc_self_cgroup);
    let CgroupState::Unavailable { reason } = &v2 else {
        return v2;
    };
    match detect_v1(mountinfo, proc_self_cgroup) {
        Ok(parents) => CgroupState::AvailableV1 { parents },
        Err(v1) => CgroupState::Unavailable {
            reason: format!("{reason}; cgroup v1: {v1}"),
        },
    }
}

/// Create the cage's cgroups and write the limits, where `state` says
/// cages can be created; any other state is returned as it is. At the
/// first cage under a parent in this process, the empty cage cgroups a
/// host that is gone left behind (one killed before it could remove them)
/// are removed ([`sweep_stale`]); later spawns do not read the parent again.
pub fn create_for(state: &CgroupState, cage_id: &str, limits: &CgroupLimits) -> CgroupState {
    match state {
        CgroupState::Available { parent } => {
            sweep_once(parent);
            create(parent, cage_id, limits)
        }
        CgroupState::AvailableV1 { parents } => {
            parents.values().for_each(|p| sweep_once(p));
            create_v1(parents, cage_id, limits)
        }
        other => other.clone(),
    }
}

/// [`sweep_stale`] of `parent`, once per process.
fn sweep_once(parent: &Path) {
    static SWEPT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut swept = SWEPT.lock().unwrap_or_else(|p| p.into_inner());
    if !swept.iter().any(|p| p == parent) {
        swept.push(parent.to_path_buf());
        drop(swept);
        sweep_stale(parent);
    }
}

/// Remove the `kaged-cage-<pid>-…` cgroups under `parent` whose host (the
/// pid, in hex, that starts a cage id) no longer runs. A cgroup that still
/// holds a process is not removed (the kernel refuses: `EBUSY`), and a live
/// host's cgroups are never touched, so a concurrent spawn is safe.
pub fn sweep_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(host) = name
            .to_str()
            .and_then(|n| n.strip_prefix("kaged-cage-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|hex| i32::from_str_radix(hex, 16).ok())
            .and_then(rustix::process::Pid::from_raw)
        else {
            continue;
        };
        let gone = matches!(
            rustix::process::test_kill_process(host),
            Err(rustix::io::Errno::SRCH)
        );
        if gone {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// Detect on this machine (`/proc/self/mountinfo`, `/proc/self/cgroup`).
pub fn detect() -> CgroupState {
    match (
        std::fs::read_to_string("/proc/self/mountinfo"),
        std::fs::read_to_string("/proc/self/cgroup"),
    ) {
        (Ok(m), Ok(c)) => detect_from(&m, &c),
        (Err(e), _) | (_, Err(e)) => CgroupState::Unavailable {
            reason: format!("cannot read /proc/self: {e}"),
        },
    }
}

mod v1;
mod v2;

pub use v1::{create_v1, detect_v1, own_v1_cgroup, v1_mounts};
pub use v2::{cgroup2_mount, check_parent, create, detect_v2, own_v2_cgroup};

/// Move process `pid` into the cage cgroup at `path` (`cgroup.procs`).
pub fn move_into(path: &Path, pid: u32) -> std::io::Result<()> {
    std::fs::write(path.join("cgroup.procs"), pid.to_string())
}

/// Remove a cage cgroup once its processes are gone.
pub fn remove(path: &Path) -> std::io::Result<()> {
    std::fs::remove_dir(path)
}
