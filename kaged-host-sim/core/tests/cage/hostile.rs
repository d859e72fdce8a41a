//! The hostile-plugin suite (issue 29; ADDENDUM §15): `hostile`, a stdlib
//! Python plugin, tries one way out of the cage per probe, and each test
//! asserts the exact refusal. Every launch uses [`CageMode::Require`] as the
//! test's own uid (root in CI, where bwrap runs the plugin as uid 0 of a
//! namespace mapped to the host's root). The probes change nothing on the
//! machine: they write back the value just read, open for writing and
//! close, bound every fork and fill, and remove what they made.

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use kaged_host_core::cage::{kernel, limits, CageError};
use kaged_host_core::{
    AuditLog, CageMode, HostConfig, HostSim, LaunchError, PluginHandle, SpawnError, TimeScale,
};
use serde_json::{json, Value};

use crate::support::host::EASY;

pub(crate) async fn caged_here() -> bool {
    kaged_host_core::testing::cage_available_for("hostile-plugin test").await
}

pub(crate) fn host_in(mode: CageMode, config_root: Option<PathBuf>) -> HostSim {
    HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(EASY).expect("scale"))
            .with_audit(AuditLog::memory())
            .with_cage(mode)
            .with_config_root(config_root),
    )
}

pub(crate) async fn hostile() -> PluginHandle {
    let s = host_in(CageMode::Require, None)
        .launch(&crate::support::host::fixture("hostile"))
        .await
        .expect("launch caged");
    assert!(s.caged(), "{:?}", s.cage());
    s
}

pub(crate) async fn probe(s: &PluginHandle, params: Value) -> Value {
    s.call("hostile.probe", Some(params.clone()), None)
        .await
        .unwrap_or_else(|e| panic!("probe {params}: {e}"))
}

#[tokio::test]
async fn kernel_settings_cannot_be_written_whatever_the_host_uid() {
    if !caged_here().await {
        return;
    }
    let s = hostile().await;
    // The plugin never runs as root (its own uid on a root host, the
    // host's on another): the files' owner (root, unmapped in the cage)
    // refuses first (EACCES); the read-only bind (EROFS) stands behind.
    let refused = |r: &Value| r["errno"] == "EROFS" || r["errno"] == "EACCES";
    // Writing back the value just read: a change only if it got through.
    let r = probe(&s, json!({"name": "sysctl_write_back"})).await;
    assert!(refused(&r), "{r}");
    for path in ["/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches"] {
        let r = probe(&s, json!({"name": "open_for_writing", "path": path})).await;
        assert!(refused(&r), "{path}: {r}");
    }
    // The other read-only kernel paths, where this kernel has them.
    for (path, file) in [
        ("/proc/sysrq-trigger", "/proc/sysrq-trigger"),
        ("/proc/irq", "/proc/irq/default_smp_affinity"),
    ] {
        let r = probe(&s, json!({"name": "open_for_writing", "path": file})).await;
        assert!(kernel::READ_ONLY.contains(&path));
        if Path::new(file).exists() {
            assert!(refused(&r), "{file}: {r}");
        } else {
            assert_eq!(r["errno"], "ENOENT", "{file}: {r}");
        }
    }
    s.shutdown().await;
}

#[tokio::test]
async fn what_docker_masks_cannot_be_read() {
    if !caged_here().await {
        return;
    }
    let present: Vec<&str> = kernel::MASKED
        .iter()
        .copied()
        .filter(|p| Path::new(p).exists())
        .collect();
    assert!(
        !present.is_empty(),
        "this kernel has none of {:?}",
        kernel::MASKED
    );
    let s = hostile().await;
    let r = probe(&s, json!({"name": "masked", "paths": present})).await;
    for p in &present {
        let seen = &r["seen"][p];
        // A masked file is a read-only /dev/null bound without device
        // access (EACCES) and a masked directory an empty tmpfs.
        let nothing = seen["errno"] == "EACCES" || seen["entries"] == 0 || seen["bytes"] == 0;
        assert!(nothing, "{p} was readable in the cage: {seen}");
    }
    s.shutdown().await;
}

/// An fd of this test process, open without close-on-exec at a high number,
/// as a shell leaves one to its children; closed on drop.
struct Leaked(
    std::os::fd::OwnedFd,
    #[allow(dead_code)] tempfile::NamedTempFile,
);

fn leak_fd() -> Leaked {
    let file = tempfile::NamedTempFile::new().expect("tempfile");
    std::fs::write(file.path(), "secret\n").expect("write");
    let fd = rustix::io::fcntl_dupfd_cloexec(file.as_file(), 200).expect("dup");
    rustix::io::fcntl_setfd(&fd, rustix::io::FdFlags::empty()).expect("inheritable");
    Leaked(fd, file)
}

#[tokio::test]
async fn the_plugin_inherits_no_fd_but_0_1_2_caged_or_not() {
    if !caged_here().await {
        return;
    }
    let leaked = leak_fd();
    assert!(leaked.0.as_raw_fd() >= 200);
    for mode in [CageMode::Require, CageMode::Off] {
        let s = host_in(mode, None)
            .launch(&crate::support::host::fixture("hostile"))
            .await
            .expect("launch");
        let r = probe(&s, json!({"name": "fds"})).await;
        assert_eq!(r["open"], json!([]), "{mode}: {r}");
        s.shutdown().await;
    }
}

#[tokio::test]
async fn the_cage_root_is_read_only_and_only_tmp_and_dev_shm_are_writable() {
    if !caged_here().await {
        return;
    }
    let s = hostile().await;
    let own = crate::support::host::fixture("hostile")
        .join("kaged-hostile")
        .display()
        .to_string();
    let refused = [
        "/kaged-hostile",
        "/etc/kaged-hostile",
        "/usr/kaged-hostile",
        "/dev/kaged-hostile",
        own.as_str(),
    ];
    let mut paths: Vec<&str> = refused.to_vec();
    paths.extend(["/tmp/kaged-hostile", "/dev/shm/kaged-hostile"]);
    let r = probe(&s, json!({"name": "create", "paths": paths})).await;
    for p in refused {
        assert_eq!(r["paths"][p]["errno"], "EROFS", "{p}: {r}");
    }
    assert_eq!(r["paths"]["/tmp/kaged-hostile"]["ok"], true, "{r}");
    assert_eq!(r["paths"]["/dev/shm/kaged-hostile"]["ok"], true, "{r}");
    s.shutdown().await;
}

#[tokio::test]
async fn no_new_user_namespace_by_clone_clone3_or_unshare() {
    if !caged_here().await {
        return;
    }
    let s = hostile().await;
    let r = probe(&s, json!({"name": "userns_clone"})).await;
    assert_eq!(r["errno"], "EPERM", "{r}");
    let r = probe(&s, json!({"name": "clone3"})).await;
    assert_eq!(r["errno"], "ENOSYS", "{r}");
    let r = probe(&s, json!({"name": "syscall", "syscall": "unshare"})).await;
    assert_eq!(r["errno"], "EPERM", "{r}");
    s.shutdown().await;
}

/// Each call is refused by the seccomp profile with EPERM (called with
/// arguments that are a no-op or a kernel error were it let through).
const REFUSED: &[&str] = &[
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "userfaultfd",
    "bpf",
    "perf_event_open",
    "add_key",
    "keyctl",
    "request_key",
    "mount",
    "umount2",
    "open_tree",
    "fsopen",
    "move_mount",
    "pivot_root",
    "chroot",
    "ptrace",
    "process_vm_readv",
    "kcmp",
    "kexec_load",
    "init_module",
    "delete_module",
    "swapon",
    "swapoff",
    "setns",
    "syslog",
    "settimeofday",
    "clock_settime",
    "name_to_handle_at",
    "open_by_handle_at",
    "fanotify_init",
    "mbind",
    "set_mempolicy",
    "quotactl",
    "vhangup",
];

#[tokio::test]
async fn the_seccomp_profile_refuses_what_docker_and_flatpak_refuse() {
    if !caged_here().await {
        return;
    }
    let s = hostile().await;
    for name in REFUSED {
        let r = probe(&s, json!({"name": "syscall", "syscall": name})).await;
        assert_eq!(r["errno"], "EPERM", "{name}: {r}");
    }
    let r = probe(&s, json!({"name": "personality"})).await;
    assert_eq!(
        (r["errno"].clone(), r["query_ok"].clone()),
        (json!("EPERM"), json!(true)),
        "{r}"
    );
    let r = probe(&s, json!({"name": "tiocsti"})).await;
    assert_eq!(r["errno"], "EPERM", "{r}");
    let r = probe(&s, json!({"name": "sockets"})).await;
    assert_eq!(
        r["errno"],
        json!({"AF_ALG": "EPERM", "AF_VSOCK": "EPERM"}),
        "{r}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn the_plugin_has_no_capability_and_no_new_privileges() {
    if !caged_here().await {
        return;
    }
    let s = hostile().await;
    let r = probe(&s, json!({"name": "status"})).await;
    let st = &r["status"];
    for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        assert_eq!(st[cap], "0000000000000000", "{cap}: {r}");
    }
    assert_eq!(st["NoNewPrivs"], "1", "{r}");
    assert_eq!(st["Seccomp"], "2", "{r}");
    let r = probe(&s, json!({"name": "rlimits"})).await;
    let want = limits::CageLimits::plugin_default();
    for rl in &want.rlimits {
        let got = &r["limits"][&rl.name];
        let soft = got[0].as_u64().expect("soft");
        // At most the stated value (the host's hard limit may be lower).
        assert!(soft <= rl.value && got[0] == got[1], "{}: {r}", rl.name);
    }
    assert_eq!(r["limits"]["RLIMIT_CORE"], json!([0, 0]), "{r}");
    let r = probe(&s, json!({"name": "env"})).await;
    let names: Vec<&str> = r["names"]
        .as_array()
        .expect("names")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.contains("TOKEN") && !n.contains("SECRET")),
        "{names:?}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn a_config_grant_is_created_only_inside_the_config_root() {
    if !caged_here().await {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(tmp.path()).expect("canonical");
    let root = base.join("config-root");
    let outside = base.join("outside");
    std::fs::create_dir_all(&root).expect("root");
    std::fs::create_dir_all(&outside).expect("outside");
    std::os::unix::fs::symlink(&outside, root.join("link")).expect("symlink");
    for (cap, escape) in [
        (
            "write:fs:config:/link/made".to_string(),
            outside.join("made"),
        ),
        (
            "write:fs:config:/../outside/dotdot".to_string(),
            outside.join("dotdot"),
        ),
    ] {
        let _ = std::fs::remove_dir_all(base.join("plugin"));
        let dir = crate::race::hostile_with(&base, &[&cap]);
        let e = host_in(CageMode::Require, Some(root.clone()))
            .launch(&dir)
            .await
            .expect_err("refused");
        let text = kaged_host_core::one_line("error", &e);
        assert!(text.contains(&cap), "{text}");
        match &e {
            LaunchError::Spawn {
                source: SpawnError::Cage(CageError::Escapes { .. }),
                ..
            } => assert!(cap.contains("link")),
            _ => assert!(cap.contains(".."), "{e:?}"),
        }
        assert!(
            !escape.exists(),
            "{} was created outside the config root",
            escape.display()
        );
    }
}
