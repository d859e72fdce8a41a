//! The hostile-plugin suite, its limits (issue 29): the `hostile` plugin
//! fills `/tmp` and `/dev/shm`, forks 300 processes and touches 768 MiB,
//! each bounded, and each test asserts the limit that stops it (see
//! `hostile.rs` for the rest of the suite).

use std::path::{Path, PathBuf};

use kaged_host_core::cage::{cgroup::CgroupState, limits};
use kaged_host_core::PluginHandle;
use serde_json::json;

use crate::hostile::{caged_here, hostile, probe};

#[tokio::test]
async fn tmp_and_dev_shm_fill_up_at_their_stated_size() {
    if !caged_here().await {
        return;
    }
    let s = hostile().await;
    for (dir, size) in [("/tmp", limits::TMP_BYTES), ("/dev/shm", limits::SHM_BYTES)] {
        let mib = size >> 20;
        let r = probe(
            &s,
            json!({"name": "fill", "dir": dir, "bound_mib": 2 * mib}),
        )
        .await;
        assert_eq!(r["errno"], "ENOSPC", "{dir}: {r}");
        let written = r["written_mib"].as_u64().expect("written");
        assert!(written <= mib && written + 4 >= mib, "{dir}: {r}");
    }
    s.shutdown().await;
}

/// Whether the cage of `s` applied `limit` (by the applied limits' field).
fn applied(s: &PluginHandle, limit: &str) -> Result<(), String> {
    let status = s.cage().expect("a process");
    let policy = status.policy.as_ref().expect("a policy");
    match &policy.cgroup.state {
        CgroupState::Applied { applied, .. } => {
            let v = serde_json::to_value(applied).expect("json");
            if v[limit].is_u64() {
                Ok(())
            } else {
                Err(format!("{limit} not applied: {v}"))
            }
        }
        other => Err(format!("cgroup not applied: {other:?}")),
    }
}

/// On a machine with no cgroup to write, the limit is not claimed and the
/// test says so; CI runs on a machine kind that has one (the v1 pids and
/// memory controllers), where a missing limit fails.
fn limit_applies(s: &PluginHandle, limit: &str) -> bool {
    match applied(s, limit) {
        Ok(()) => true,
        Err(why) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true and the cage's {limit} does not apply: {why}")
        }
        Err(why) => {
            eprintln!("SKIPPED (not CI): {why}");
            false
        }
    }
}

#[tokio::test]
async fn a_fork_bomb_stops_at_the_pids_limit() {
    if !caged_here().await {
        return;
    }
    let s = hostile().await;
    if limit_applies(&s, "pids_max") {
        let r = probe(&s, json!({"name": "fork_bomb", "bound": 300})).await;
        assert_eq!(r["errno"], "EAGAIN", "{r}");
        let forked = r["forked"].as_u64().expect("forked");
        // bwrap's init and the plugin count too.
        assert!((90..100).contains(&forked), "{r}");
    }
    let dirs: Vec<PathBuf> = cage_cgroups(&s);
    s.shutdown().await;
    // The cage's cgroups go with it.
    for d in dirs {
        assert!(!d.exists(), "{} outlived the cage", d.display());
    }
}

fn cage_cgroups(s: &PluginHandle) -> Vec<PathBuf> {
    let status = s.cage().expect("a process");
    let policy = status.policy.as_ref().expect("a policy");
    policy
        .cgroup
        .state
        .dirs()
        .into_iter()
        .map(Path::to_path_buf)
        .collect()
}

#[tokio::test]
async fn memory_past_512_mib_is_killed() {
    if !caged_here().await {
        return;
    }
    let s = hostile().await;
    if limit_applies(&s, "memory_max_bytes") {
        let r = probe(&s, json!({"name": "memory", "mib": 768})).await;
        assert_eq!(r["signal"], 9, "{r}");
        // The plugin itself lives on.
        let r = probe(&s, json!({"name": "status"})).await;
        assert_eq!(r["ok"], true);
    }
    s.shutdown().await;
}
