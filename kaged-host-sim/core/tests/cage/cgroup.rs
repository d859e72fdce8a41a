//! cgroup detection and limits: the parsers, a fake cgroup tree in a
//! temporary directory, and this machine (whatever it offers, the state
//! never claims a limit that was not applied).

use std::path::{Path, PathBuf};

use kaged_host_core::cage::cgroup::{
    self, cgroup2_mount, check_parent, cpu_weight_from_shares, own_v1_cgroup, own_v2_cgroup,
    v1_mounts, CgroupLimits, CgroupState,
};

const MOUNTINFO: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

#[test]
fn cpu_shares_become_a_proportional_weight() {
    assert_eq!(cpu_weight_from_shares(256), 25);
    assert_eq!(cpu_weight_from_shares(1024), 100);
    assert_eq!(cpu_weight_from_shares(2), 1);
    assert_eq!(cpu_weight_from_shares(1 << 40), 10_000);
    let l = CgroupLimits::plugin_default();
    assert_eq!(
        (l.memory_max_bytes, l.pids_max, l.cpu_shares, l.cpu_weight),
        (512 << 20, 100, 256, 25)
    );
}

#[test]
fn the_cgroup2_mount_and_own_cgroup_are_parsed() {
    assert_eq!(
        cgroup2_mount(MOUNTINFO),
        Some((PathBuf::from("/"), PathBuf::from("/sys/fs/cgroup/unified")))
    );
    let escaped = "50 1 0:40 /a /mnt/cg\\040v2 rw - cgroup2 none rw\n";
    assert_eq!(
        cgroup2_mount(escaped),
        Some(("/a".into(), "/mnt/cg v2".into()))
    );
    assert_eq!(cgroup2_mount("31 23 0:28 / /x rw - tmpfs tmpfs rw\n"), None);
    assert_eq!(
        own_v2_cgroup("4:memory:/x\n0::/user.slice/a\n"),
        Some("/user.slice/a".into())
    );
    assert_eq!(own_v2_cgroup("4:memory:/x\n"), None);
}

/// A directory laid out like a cgroup v2 directory.
fn fake(controllers: &str, subtree: &str, procs: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tempdir");
    for (f, text) in [
        ("cgroup.controllers", controllers),
        ("cgroup.subtree_control", subtree),
        ("cgroup.procs", procs),
    ] {
        std::fs::write(d.path().join(f), text).expect("write");
    }
    d
}

fn unavailable(state: &CgroupState) -> &str {
    match state {
        CgroupState::Unavailable { reason } => reason,
        other => panic!("expected unavailable, got {other:?}"),
    }
}

#[test]
fn missing_controllers_or_internal_processes_make_it_unavailable() {
    let d = fake("hugetlb\n", "", "");
    let reason = unavailable(&check_parent(d.path(), false)).to_string();
    assert!(
        reason.contains("offers hugetlb") && reason.contains("memory, pids, cpu missing"),
        "{reason}"
    );
    let d = fake("cpu memory pids io\n", "", "123\n");
    let reason = unavailable(&check_parent(d.path(), false)).to_string();
    assert!(reason.contains("holds processes"), "{reason}");
    // The hierarchy's root is exempt; enabled controllers are enough.
    assert!(matches!(
        check_parent(d.path(), true),
        CgroupState::Available { .. }
    ));
    let d = fake("cpu memory pids\n", "cpu memory pids\n", "123\n");
    assert!(matches!(
        check_parent(d.path(), false),
        CgroupState::Available { .. }
    ));
}

#[test]
fn create_writes_each_limit_and_says_which() {
    let d = fake("cpu memory pids\n", "", "");
    let state = cgroup::create(d.path(), "abc", &CgroupLimits::plugin_default());
    let CgroupState::Applied {
        path,
        applied,
        failed,
        ..
    } = &state
    else {
        panic!("{state:?}")
    };
    assert_eq!(path, &d.path().join("kaged-cage-abc"));
    assert_eq!(
        (
            applied.memory_max_bytes,
            applied.pids_max,
            applied.cpu_weight
        ),
        (Some(512 << 20), Some(100), Some(25))
    );
    assert!(failed.is_empty());
    let read = |f: &str| std::fs::read_to_string(path.join(f)).unwrap();
    assert_eq!(read("memory.max"), "536870912");
    assert_eq!(read("pids.max"), "100");
    assert_eq!(read("cpu.weight"), "25");
    cgroup::move_into(path, 4242).unwrap();
    assert_eq!(read("cgroup.procs"), "4242");
    assert!(
        std::fs::read_to_string(d.path().join("cgroup.subtree_control"))
            .unwrap()
            .contains("+")
    );
}

#[test]
fn create_under_a_missing_parent_applies_nothing() {
    let state = cgroup::create(
        Path::new("/nonexistent/cg"),
        "x",
        &CgroupLimits::plugin_default(),
    );
    assert!(unavailable(&state).contains("cannot create"));
}

#[test]
fn this_machine_is_detected_without_claiming_anything() {
    let state = cgroup::detect();
    eprintln!("cgroup on this machine: {state:?}");
    match &state {
        CgroupState::Unavailable { reason } => assert!(!reason.is_empty()),
        CgroupState::Available { parent } => assert!(parent.is_dir()),
        CgroupState::AvailableV1 { parents } => {
            assert!(!parents.is_empty() && parents.values().all(|p| p.is_dir()))
        }
        CgroupState::Applied { .. } => panic!("detection never applies limits"),
    }
    let mut inputs = crate::model::inputs();
    inputs.cgroup = state.clone();
    let text = crate::model::compile_in(&[], &inputs).unwrap().render();
    if let CgroupState::Unavailable { .. } = state {
        assert!(
            text.contains("cgroup: unavailable, no limit applied"),
            "{text}"
        );
    }
    assert!(!text.contains("applied:"), "{text}");
}

const HYBRID: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

#[test]
fn the_v1_hierarchies_and_own_cgroups_are_parsed() {
    let m = v1_mounts(HYBRID);
    assert_eq!(
        m.keys().collect::<Vec<_>>(),
        ["cpu", "memory", "pids"],
        "{m:?}"
    );
    // the first mount of a controller wins
    assert_eq!(m["cpu"].1, PathBuf::from("/sys/fs/cgroup/cpu"));
    let own = "8:pids:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/x\n0::/\n";
    assert_eq!(
        own_v1_cgroup(own, "memory"),
        Some("/process_api/abc".into())
    );
    assert_eq!(own_v1_cgroup(own, "cpu"), Some("/x".into()));
    assert_eq!(own_v1_cgroup(own, "pids"), Some("/".into()));
    assert_eq!(own_v1_cgroup(own, "blkio"), None);
}

#[test]
fn a_hybrid_host_without_v2_controllers_falls_back_to_v1_or_says_why_not() {
    // The v2 mount offers nothing here; the v1 directories do not exist
    // under this fake mountinfo's paths unless this machine has them.
    let own = "8:pids:/\n4:memory:/\n1:cpu:/\n0::/\n";
    match cgroup::detect_from(HYBRID, own) {
        CgroupState::AvailableV1 { parents } => {
            assert!(parents.values().all(|p| p.starts_with("/sys/fs/cgroup")))
        }
        CgroupState::Unavailable { reason } => {
            assert!(reason.contains("cgroup v1:"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn create_v1_writes_each_controller_its_limit() {
    let d = tempfile::tempdir().expect("tempdir");
    let mut parents = std::collections::BTreeMap::new();
    for c in ["memory", "pids", "cpu"] {
        std::fs::create_dir(d.path().join(c)).expect("mkdir");
        parents.insert(c.to_string(), d.path().join(c));
    }
    let state = cgroup::create_v1(&parents, "v1", &CgroupLimits::plugin_default());
    let dirs: Vec<PathBuf> = state.dirs().into_iter().map(Path::to_path_buf).collect();
    assert_eq!(dirs.len(), 3, "{state:?}");
    let read = |c: &str, f: &str| {
        std::fs::read_to_string(d.path().join(c).join("kaged-cage-v1").join(f)).unwrap()
    };
    assert_eq!(read("memory", "memory.limit_in_bytes"), "536870912");
    assert_eq!(read("pids", "pids.max"), "100");
    assert_eq!(read("cpu", "cpu.shares"), "256");
    let CgroupState::Applied {
        applied, failed, ..
    } = &state
    else {
        panic!("{state:?}")
    };
    assert_eq!(
        (
            applied.memory_max_bytes,
            applied.pids_max,
            applied.cpu_shares,
            applied.cpu_weight
        ),
        (Some(512 << 20), Some(100), Some(256), None)
    );
    assert!(failed.is_empty());
}
