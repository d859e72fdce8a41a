//! `probe::ExitWatch` on caged plugins: what a plugin leaves running when
//! it exits is seen, and what it ended first is not, however late the
//! watch looks. The cage's init is held while the watch runs, so the
//! exited plugin stays a zombie and the cage is not torn down under the
//! look. The old watch polled every millisecond and read the leader before
//! the members: a look that fell between the plugin's exit and the cage's
//! teardown saw the leader exited and the orphan already killed, and
//! passed (`lifecycle.no_orphans`, once in CI); a look after init had
//! reaped the plugin fell back to the members of its last look, and
//! reported a child the plugin had ended itself (the second test fails on
//! that watch, here where every look is late).

use std::time::Duration;

use kaged_host_core::probe::{group_members, proc_state, ExitWatch};
use kaged_host_core::{CageMode, PluginHandle};

use crate::hostile::{caged_here, host_in};

/// Between two looks: long beside a plugin's exit, so that the look after
/// it comes late (held, the answer is the same whenever it comes).
const LATE: Duration = Duration::from_millis(200);
/// The watch's bound (the fixtures' `shutdown_timeout_sec` is 2).
const LIMIT: Duration = Duration::from_secs(30);

async fn launch(name: &str) -> PluginHandle {
    let s = host_in(CageMode::Require, None)
        .launch(&crate::support::host::fixture(name))
        .await
        .expect("launch caged");
    assert!(s.caged(), "{:?}", s.cage());
    s
}

/// The child's pid as the host sees it: the one member of the cage's
/// group that is neither init nor the plugin.
fn the_child(pgid: u32, leader: u32) -> u32 {
    let others: Vec<u32> = group_members(pgid)
        .into_iter()
        .filter(|p| *p != pgid && *p != leader)
        .collect();
    assert_eq!(others.len(), 1, "one child in the cage: {others:?}");
    others[0]
}

/// Launch, watch (holding the cage's init), shut down: the members the
/// watch reports, the child's pid, and whether the child is gone after.
async fn watch_the_exit(name: &str) -> (Vec<u32>, u32) {
    let s = launch(name).await;
    let pgid = s.pid().expect("the cage's pid");
    let leader = s.plugin_pid().expect("the plugin's pid");
    let child = the_child(pgid, leader);
    let watch = ExitWatch::start(leader, vec![child], Some(pgid), LATE, LIMIT);
    let outcome = s.shutdown().await;
    let outlived = watch.finish();
    assert!(outcome.is_clean(), "{outcome}");
    // Nothing is left behind: the cage ended, its child with it.
    assert!(
        proc_state(child).is_none_or(|p| !p.is_running()),
        "child {child} still runs"
    );
    (outlived, child)
}

#[tokio::test]
async fn a_child_left_running_is_seen_however_late_the_watch_looks() {
    if !caged_here().await {
        return;
    }
    let (outlived, child) = watch_the_exit("child-spawning").await;
    assert_eq!(outlived, vec![child]);
}

#[tokio::test]
async fn a_child_the_plugin_ended_first_is_not_reported_however_late_the_watch_looks() {
    if !caged_here().await {
        return;
    }
    let (outlived, child) = watch_the_exit("child-reaping").await;
    assert!(
        outlived.is_empty(),
        "child {child} was ended and reaped by the plugin, yet reported: {outlived:?}"
    );
}
