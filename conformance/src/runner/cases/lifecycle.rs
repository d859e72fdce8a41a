//! `lifecycle.*`: `shutdown` leads to exit 0 in time (the primary spawn's
//! session, first: the run's shutdown barrier, `runner::session::barrier`), stdin
//! EOF leads to exit (a fresh spawn), and nothing of the plugin outlives it
//! (a fresh spawn watched while it exits). Their verdicts are how the
//! plugin stops, so they end their spawns themselves.

use std::time::Duration;

use kaged_host_core::group_alive;
use kaged_host_core::probe::{descendants, group_members, ExitWatch};
use kaged_host_core::ShutdownOutcome;
use rustix::process::Signal;

use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::Target;
use crate::runner::session::context::RunContext;
use crate::runner::session::processes::{describe_exit, retire, LaneProcesses};

/// How often the exit watch polls `/proc`.
const WATCH_POLL: Duration = Duration::from_millis(1);

/// `lifecycle.shutdown_exits_zero`: `shutdown` on the lane's shared session
/// (the primary spawn's) leads to exit 0 within `shutdown_timeout_sec`.
pub(crate) async fn shutdown_exits_zero(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let limit = ctx.timeouts.shutdown;
    let v = match processes.shared(ctx, scope).await {
        Err(e) => Verdict::no_session(e),
        Ok(s) => {
            let outcome = s.shutdown().await;
            match outcome {
                ShutdownOutcome::Exited(e) if e.code == Some(0) => Verdict::pass("exited with code 0 after shutdown, in time"),
                ShutdownOutcome::AlreadyEnded => Verdict::fail("expected: exit 0 after shutdown; actual: the plugin had already ended"),
                other => Verdict::fail(format!("expected: exit code 0 within shutdown_timeout_sec ({limit:?}); actual: {other}")),
            }
        }
    };
    processes.close_shared().await;
    v
}

/// `lifecycle.stdin_eof_exits`: a fresh spawn exits when its stdin
/// closes.
pub(crate) async fn stdin_eof_exits(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let limit = ctx.timeouts.shutdown;
    match processes.fresh(ctx, scope).await {
        Err(e) => Verdict::no_session(e),
        Ok(s) => {
            s.close_stdin();
            let v = match s.wait_exit(limit).await {
                Some(e) => Verdict::pass(format!("exited ({}) after stdin EOF", describe_exit(Some((e.code, e.signal))))),
                None => Verdict::fail(format!("expected: exit after stdin EOF within shutdown_timeout_sec ({limit:?}); actual: still running")),
            };
            if s.is_running() {
                s.kill("conformance: still running after stdin EOF").await;
            }
            retire(s).await;
            v
        }
    }
}

/// `lifecycle.no_orphans`: nothing of a fresh spawn's process group (or
/// its escaped descendants) outlives it.
pub(crate) async fn no_orphans(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let t = &ctx.timeouts;
    let s = match processes.fresh(ctx, scope).await {
        Err(e) => return Verdict::no_session(e),
        Ok(s) => s,
    };
    let Some(pgid) = s.pid() else {
        retire(s).await;
        return Verdict::skip("the plugin has no process id");
    };
    // Let the plugin settle (children are often started at start-up).
    let _ = s.ping().await;
    // Caged, the group is the cage's: bwrap's init leads it and the plugin
    // is init's child; the plugin, not init, must outlive its children.
    let leader = s.plugin_pid().unwrap_or(pgid);
    let members: Vec<u32> = group_members(pgid)
        .into_iter()
        .filter(|p| *p != pgid && *p != leader)
        .collect();
    let family: Vec<u32> = descendants(leader);
    let escaped: Vec<u32> = family
        .iter()
        .copied()
        .filter(|p| !members.contains(p))
        .collect();
    let limit = t.shutdown + t.sigterm_grace * 2 + Duration::from_secs(1);
    // Caged, the cage's init is held while the plugin exits, so that what
    // it leaves running is still running when the watch looks
    // (`kaged_host_core::probe`).
    let hold = s.caged().then_some(pgid);
    let watch = ExitWatch::start(leader, members.clone(), hold, WATCH_POLL, limit);
    let outcome = s.shutdown().await;
    let outlived = watch.finish();
    let note = retire(s).await;
    let escaped_alive: Vec<u32> = escaped
        .iter()
        .copied()
        .filter(|p| kaged_host_core::probe::proc_state(*p).is_some_and(|st| st.is_running()))
        .collect();
    for p in &escaped_alive {
        // Left the plugin's group: the host cannot kill it; we must not leak it.
        if let Some(pid) = rustix::process::Pid::from_raw(*p as i32) {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
    }
    if !escaped_alive.is_empty() {
        Verdict::fail(format!("expected: no process outlives the plugin; actual: descendant(s) {escaped_alive:?} left its process group and survived it"))
    } else if !outlived.is_empty() {
        Verdict::fail(format!(
            "expected: the plugin's children end before it exits; actual: process(es) {outlived:?} of its group were still running when it exited ({outcome}); the host had to SIGKILL them"
        ))
    } else if group_alive(pgid) {
        Verdict::fail(format!(
            "expected: no process of group {pgid} left; actual: the group is still alive"
        ))
    } else if let Some(n) = note {
        Verdict::fail(format!("expected: nothing left behind; actual: {n}"))
    } else {
        Verdict::pass(format!("no process of the plugin's group outlived it ({} child process(es) seen before shutdown)", members.len() + escaped.len()))
    }
}
