//! The plugin never runs as the host's root (ADDENDUM §16; issue 45). On a
//! root host each plugin runs as its own unprivileged uid and gid
//! (`cage::user`, `cage::stage`), so the per-user kernel limits are its
//! own; on a host run by an ordinary user it runs as that user. The old
//! spawner ran the plugin as uid 0 with its capabilities dropped: these
//! probes fail there (uid 0 seen from outside; the host's inotify
//! instances taken). Nothing outside the test's processes is changed: the
//! inotify instances the plugin takes are released before the asserts.

use kaged_host_core::cage::{limits, PluginIds};
use serde_json::json;

use crate::hostile::{caged_here, hostile, probe};

/// The uid (and gid) the plugin should run as here.
fn expected_id() -> u32 {
    let euid = rustix::process::geteuid().as_raw();
    if euid == 0 {
        PluginIds::from_env()
            .expect("the id range")
            .id_for("hostile")
    } else {
        euid
    }
}

/// A `Uid:`/`Gid:` line of `/proc/PID/status`: its four ids.
fn ids(status: &str, key: &str) -> Vec<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no {key} in {status}"))
        .split_whitespace()
        .map(|v| v.parse().expect("an id"))
        .collect()
}

#[tokio::test]
async fn the_plugin_runs_as_its_own_uid_never_the_hosts_root() {
    if !caged_here().await {
        return;
    }
    let want = expected_id();
    let s = hostile().await;
    // Seen from the host: real, effective, saved and filesystem ids.
    let pid = s.plugin_pid().expect("the plugin's pid");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    assert_eq!(ids(&status, "Uid:"), vec![want; 4], "{status}");
    assert_eq!(ids(&status, "Gid:"), vec![want; 4], "{status}");
    assert_ne!(want, 0);
    // Seen from inside (its own user namespace maps the id to itself).
    let r = probe(&s, json!({"name": "status"})).await;
    assert_eq!(r["status"]["Uid"], want.to_string(), "{r}");
    assert_eq!(r["status"]["Gid"], want.to_string(), "{r}");
    if rustix::process::geteuid().is_root() {
        // No supplementary group of the host's root.
        assert_eq!(r["status"]["Groups"], "", "{r}");
        // RLIMIT_NPROC binds the plugin's own uid.
        let r = probe(&s, json!({"name": "rlimits"})).await;
        let n = limits::PROCESSES;
        assert_eq!(r["limits"]["RLIMIT_NPROC"], json!([n, n]), "{r}");
    }
    // Every report's cage line says who it runs as.
    let line = s.cage().expect("a cage").line();
    let who = if rustix::process::geteuid().is_root() {
        format!("; uid {want}")
    } else {
        format!("; host uid {want}")
    };
    assert!(line.contains(&who), "{line}");
    s.shutdown().await;
}

#[tokio::test]
async fn the_plugins_inotify_instances_are_its_own_not_the_hosts() {
    if !caged_here().await || !rustix::process::geteuid().is_root() {
        // As an ordinary user the plugin runs as that user and shares its
        // instances (docs/authoring.md § The cage says so).
        return;
    }
    let max: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_instances")
        .expect("max_user_instances")
        .trim()
        .parse()
        .expect("a number");
    assert!(
        max < 4000,
        "max_user_instances is {max}: above the cage's RLIMIT_NOFILE, the fill would \
         stop at the descriptor limit and prove nothing"
    );
    let s = hostile().await;
    let filled = probe(&s, json!({"name": "inotify_fill", "bound": max + 16})).await;
    // While the plugin holds every instance it may have, the host's root
    // can still make one.
    let host = rustix::fs::inotify::init(rustix::fs::inotify::CreateFlags::CLOEXEC);
    let released = probe(&s, json!({"name": "inotify_release"})).await;
    s.shutdown().await;
    assert_eq!(filled["errno"], "EMFILE", "{filled}");
    assert_eq!(released["released"], filled["held"], "{released}");
    assert!(
        host.is_ok(),
        "the plugin took the host's inotify instances: {host:?} ({filled})"
    );
}
