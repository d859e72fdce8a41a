//! cgroup limits of a plugin cage (plugin-host.md: memory 512 MiB, cpu
//! shares 256, pids 100; ADDENDUM §13: "where a writable cgroup v2 subtree
//! exists; otherwise the cage description says `cgroup: unavailable`.
//! Never claimed when not applied").
//!
//! Three states, and only the last one claims limits: [`CgroupState::
//! Available`] (detected: a v2 subtree we may write, with the memory, pids
//! and cpu controllers), [`CgroupState::Unavailable`] (with the reason),
//! [`CgroupState::Applied`] (a per-cage child was created and each limit in
//! `applied` was written and accepted by the kernel).
//!
//! cpu shares → cpu.weight: v1 `cpu.shares` (default 1024) becomes v2
//! `cpu.weight` (default 100) proportionally, `weight = shares * 100 /
//! 1024`, clamped to 1..=10000: 256 shares → weight 25, a quarter of a
//! default process either way. (runc's `1 + (shares - 2) * 9999 / 262142`
//! maps the full ranges instead and gives 10, which does not keep the ratio
//! to default processes.)

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
    /// `memory.max` written.
    pub memory_max_bytes: Option<u64>,
    /// `pids.max` written.
    pub pids_max: Option<u64>,
    /// `cpu.weight` written.
    pub cpu_weight: Option<u64>,
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
    /// No limits can be applied here.
    Unavailable {
        /// Why.
        reason: String,
    },
    /// A per-cage cgroup exists; `applied` is what the kernel accepted.
    Applied {
        /// The cage's cgroup directory.
        path: PathBuf,
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

/// Undo the `\040`-style octal escapes of `/proc/self/mountinfo`.
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The first cgroup2 mount of a `/proc/self/mountinfo` text: (the root of
/// the hierarchy it shows, its mount point).
pub fn cgroup2_mount(mountinfo: &str) -> Option<(PathBuf, PathBuf)> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        if right.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        let fields: Vec<&str> = left.split_whitespace().collect();
        Some((
            PathBuf::from(unescape(fields.get(3)?)),
            PathBuf::from(unescape(fields.get(4)?)),
        ))
    })
}

/// This process's cgroup v2 path (the `0::PATH` line of `/proc/self/cgroup`).
pub fn own_v2_cgroup(proc_self_cgroup: &str) -> Option<PathBuf> {
    proc_self_cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(PathBuf::from)
}

/// Decide from `/proc/self/mountinfo` and `/proc/self/cgroup` texts and the
/// files under the mount whether a per-cage cgroup with the limits can be
/// created (reading only).
pub fn detect_from(mountinfo: &str, proc_self_cgroup: &str) -> CgroupState {
    let unavailable = |reason: String| CgroupState::Unavailable { reason };
    let Some((root, mount)) = cgroup2_mount(mountinfo) else {
        return unavailable("no cgroup v2 hierarchy is mounted".into());
    };
    let Some(own) = own_v2_cgroup(proc_self_cgroup) else {
        return unavailable("this process has no cgroup v2 membership (no 0:: line)".into());
    };
    let Ok(rel) = own.strip_prefix(&root) else {
        return unavailable(format!(
            "this process's cgroup {} is outside the mounted hierarchy {}",
            own.display(),
            root.display()
        ));
    };
    let at_mount = rel.as_os_str().is_empty();
    let dir = if at_mount { mount } else { mount.join(rel) };
    check_parent(&dir, at_mount && root == Path::new("/"))
}

/// Whether cages can be created under `dir` (`is_root`: the hierarchy's
/// root, exempt from the no-internal-processes rule).
pub fn check_parent(dir: &Path, is_root: bool) -> CgroupState {
    let unavailable = |reason: String| CgroupState::Unavailable { reason };
    let read = |name: &str| std::fs::read_to_string(dir.join(name));
    let controllers = match read("cgroup.controllers") {
        Ok(t) => t,
        Err(e) => {
            return unavailable(format!(
                "cannot read {}/cgroup.controllers: {e}",
                dir.display()
            ))
        }
    };
    let offered: Vec<&str> = controllers.split_whitespace().collect();
    let missing: Vec<&str> = CONTROLLERS
        .into_iter()
        .filter(|c| !offered.contains(c))
        .collect();
    if !missing.is_empty() {
        let offered = if offered.is_empty() {
            "no controller".to_string()
        } else {
            offered.join(", ")
        };
        return unavailable(format!(
            "cgroup v2 at {} offers {offered}; {} missing (on a hybrid host they are \
             bound to cgroup v1 hierarchies)",
            dir.display(),
            missing.join(", ")
        ));
    }
    if rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_err() {
        return unavailable(format!("{} is not writable by this process", dir.display()));
    }
    let enabled = read("cgroup.subtree_control").unwrap_or_default();
    let all_enabled = CONTROLLERS
        .iter()
        .all(|c| enabled.split_whitespace().any(|e| e == *c));
    let has_procs = read("cgroup.procs").is_ok_and(|p| !p.trim().is_empty());
    if !all_enabled && has_procs && !is_root {
        return unavailable(format!(
            "{} holds processes, so its controllers cannot be enabled for children \
             (run the host in a delegated, otherwise empty cgroup)",
            dir.display()
        ));
    }
    CgroupState::Available {
        parent: dir.to_path_buf(),
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

/// Create the cage's cgroup `parent/kaged-cage-<cage_id>` and write each
/// limit; the state says exactly which were accepted. When none was, the
/// cgroup is removed and the state is [`CgroupState::Unavailable`].
pub fn create(parent: &Path, cage_id: &str, limits: &CgroupLimits) -> CgroupState {
    let path = parent.join(format!("kaged-cage-{cage_id}"));
    let control = parent.join("cgroup.subtree_control");
    let enabled = std::fs::read_to_string(&control).unwrap_or_default();
    for c in CONTROLLERS {
        if !enabled.split_whitespace().any(|e| e == c) {
            // Failure shows below, as a limit that cannot be written.
            let _ = std::fs::write(&control, format!("+{c}"));
        }
    }
    if let Err(e) = std::fs::create_dir(&path) {
        return CgroupState::Unavailable {
            reason: format!("cannot create {}: {e}", path.display()),
        };
    }
    let mut applied = AppliedLimits::default();
    let mut failed = Vec::new();
    let mut write =
        |file: &str, value: u64| match std::fs::write(path.join(file), value.to_string()) {
            Ok(()) => Some(value),
            Err(e) => {
                failed.push(format!("{file}: {e}"));
                None
            }
        };
    applied.memory_max_bytes = write("memory.max", limits.memory_max_bytes);
    applied.pids_max = write("pids.max", limits.pids_max);
    applied.cpu_weight = write("cpu.weight", limits.cpu_weight);
    if applied == AppliedLimits::default() {
        let _ = std::fs::remove_dir(&path);
        return CgroupState::Unavailable {
            reason: format!(
                "no limit could be written under {}: {}",
                parent.display(),
                failed.join("; ")
            ),
        };
    }
    CgroupState::Applied {
        path,
        applied,
        failed,
    }
}

/// Move process `pid` into the cage cgroup at `path` (`cgroup.procs`).
pub fn move_into(path: &Path, pid: u32) -> std::io::Result<()> {
    std::fs::write(path.join("cgroup.procs"), pid.to_string())
}

/// Remove a cage cgroup once its processes are gone.
pub fn remove(path: &Path) -> std::io::Result<()> {
    std::fs::remove_dir(path)
}
