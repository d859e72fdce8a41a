//! cgroup v1, where a hybrid host binds the controllers to v1 hierarchies
//! (the usual CI runner: `/sys/fs/cgroup/{memory,pids,cpu}`): one child
//! cgroup per cage in each controller's hierarchy, under this process's own
//! cgroup there, with `memory.limit_in_bytes`, `pids.max` and
//! `cpu.shares`. The spawner's child writes itself (`0`) into each `tasks`
//! file just before running bwrap, so every process of the cage is counted
//! from the start (verified on this machine kind: the v1 pids controller
//! binds a cage started that way); `tasks`, not `cgroup.procs`, because
//! moving the calling thread skips the kernel's global threadgroup lock
//! and its RCU grace period ([`super::CgroupState::entry_files`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::v2::unescape;
use super::{AppliedLimits, CgroupLimits, CgroupState, CONTROLLERS};

/// The v1 mounts of a `/proc/self/mountinfo` text that carry one of
/// [`CONTROLLERS`]: controller → (the root of the hierarchy it shows, its
/// mount point).
pub fn v1_mounts(mountinfo: &str) -> BTreeMap<String, (PathBuf, PathBuf)> {
    let mut out = BTreeMap::new();
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mut r = right.split_whitespace();
        if r.next() != Some("cgroup") {
            continue;
        }
        let options = r.nth(1).unwrap_or("");
        let fields: Vec<&str> = left.split_whitespace().collect();
        let (Some(root), Some(mount)) = (fields.get(3), fields.get(4)) else {
            continue;
        };
        for c in CONTROLLERS {
            if options.split(',').any(|o| o == c) {
                out.entry(c.to_string()).or_insert_with(|| {
                    (
                        PathBuf::from(unescape(root)),
                        PathBuf::from(unescape(mount)),
                    )
                });
            }
        }
    }
    out
}

/// This process's cgroup in the v1 hierarchy of `controller` (the
/// `N:a,b:PATH` line of `/proc/self/cgroup` naming it).
pub fn own_v1_cgroup(proc_self_cgroup: &str, controller: &str) -> Option<PathBuf> {
    proc_self_cgroup.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        names
            .split(',')
            .any(|n| n == controller)
            .then(|| PathBuf::from(path))
    })
}

/// Where cages could be created in v1 hierarchies: each controller whose
/// directory (this process's cgroup there) exists and is writable. The
/// reason lists what is missing when none is.
pub fn detect_v1(
    mountinfo: &str,
    proc_self_cgroup: &str,
) -> Result<BTreeMap<String, PathBuf>, String> {
    let mounts = v1_mounts(mountinfo);
    let mut parents = BTreeMap::new();
    let mut why = Vec::new();
    for c in CONTROLLERS {
        let Some((root, mount)) = mounts.get(c) else {
            why.push(format!("no v1 {c} hierarchy"));
            continue;
        };
        let Some(own) = own_v1_cgroup(proc_self_cgroup, c) else {
            why.push(format!("no v1 {c} membership"));
            continue;
        };
        let Ok(rel) = own.strip_prefix(root) else {
            why.push(format!(
                "the {c} cgroup {} is outside its mount",
                own.display()
            ));
            continue;
        };
        let dir = mount.join(rel);
        if rustix::fs::access(&dir, rustix::fs::Access::WRITE_OK).is_err() {
            why.push(format!("{} is not writable", dir.display()));
            continue;
        }
        parents.insert(c.to_string(), dir);
    }
    if parents.is_empty() {
        Err(why.join("; "))
    } else {
        Ok(parents)
    }
}

/// Create `kaged-cage-<cage_id>` under each parent and write its limit;
/// the state says exactly which were accepted (nothing created is kept
/// when no limit could be written).
pub fn create_v1(
    parents: &BTreeMap<String, PathBuf>,
    cage_id: &str,
    limits: &CgroupLimits,
) -> CgroupState {
    let mut applied = AppliedLimits::default();
    let mut failed = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for (controller, parent) in parents {
        let (file, value) = match controller.as_str() {
            "memory" => ("memory.limit_in_bytes", limits.memory_max_bytes),
            "pids" => ("pids.max", limits.pids_max),
            "cpu" => ("cpu.shares", limits.cpu_shares),
            _ => continue,
        };
        let dir = parent.join(format!("kaged-cage-{cage_id}"));
        if let Err(e) = std::fs::create_dir(&dir) {
            failed.push(format!("{}: {e}", dir.display()));
            continue;
        }
        match std::fs::write(dir.join(file), value.to_string()) {
            Ok(()) => {
                match controller.as_str() {
                    "memory" => applied.memory_max_bytes = Some(value),
                    "pids" => applied.pids_max = Some(value),
                    _ => applied.cpu_shares = Some(value),
                }
                dirs.push(dir);
            }
            Err(e) => {
                failed.push(format!("{file} (v1): {e}"));
                let _ = std::fs::remove_dir(&dir);
            }
        }
    }
    let mut dirs = dirs.into_iter();
    let Some(path) = dirs.next() else {
        return CgroupState::Unavailable {
            reason: format!("no v1 limit could be written: {}", failed.join("; ")),
        };
    };
    CgroupState::Applied {
        path,
        also: dirs.collect(),
        applied,
        failed,
    }
}
