//! cgroup v2: a writable subtree of the unified hierarchy with the memory,
//! pids and cpu controllers; one child cgroup per cage.

use std::path::{Path, PathBuf};

use super::{AppliedLimits, CgroupLimits, CgroupState, CONTROLLERS};

/// Undo the `\040`-style octal escapes of `/proc/self/mountinfo`.
pub(super) fn unescape(field: &str) -> String {
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
pub fn detect_v2(mountinfo: &str, proc_self_cgroup: &str) -> CgroupState {
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
        also: Vec::new(),
        applied,
        failed,
    }
}
