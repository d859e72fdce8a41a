//! Process probes for the conformance suite: which processes belong to a
//! plugin's process group, and whether any of them outlived the plugin.
//!
//! The host kills and reaps a plugin's whole process group as soon as the
//! plugin exits, so "did the plugin leave a child behind?" can only be
//! answered by watching the group while the plugin exits. [`ExitWatch`]
//! polls `/proc` from a thread of its own: when it sees the leader exited
//! (a zombie, not yet reaped by the host) while another member of its group
//! is still running, that member outlived the plugin. When the leader is
//! already reaped by the time it looks, the members that were running at the
//! last look while the leader still ran are reported (they ended no earlier
//! than the leader, up to one poll interval).
//!
//! ```no_run
//! use std::time::Duration;
//! use kaged_host_core::probe::{group_members, ExitWatch};
//! let pgid = 4242;
//! let others: Vec<u32> = group_members(pgid).into_iter().filter(|p| *p != pgid).collect();
//! let watch = ExitWatch::start(pgid, others, Duration::from_millis(1), Duration::from_secs(5));
//! // ... ask the plugin to exit ...
//! let survivors = watch.finish();
//! assert!(survivors.is_empty());
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::procfs::all_processes;
pub use super::procfs::{descendants, proc_state, process_usage, tree_usage, ProcState, TreeUsage};

/// Every running process whose process group is `pgid` (the leader too).
pub fn group_members(pgid: u32) -> Vec<u32> {
    let mut v: Vec<u32> = all_processes()
        .into_iter()
        .filter(|p| p.pgrp == pgid && p.is_running())
        .map(|p| p.pid)
        .collect();
    v.sort_unstable();
    v
}

/// The running children of `pid`, in pid order.
pub fn children(pid: u32) -> Vec<u32> {
    let mut v: Vec<u32> = all_processes()
        .into_iter()
        .filter(|p| p.ppid == pid && p.is_running())
        .map(|p| p.pid)
        .collect();
    v.sort_unstable();
    v
}

/// The pid, as this host sees it, of the process that `inner` names in
/// the pid namespace of `ancestor`'s descendants (a caged plugin reports
/// pids of its cage: bwrap's init is 1, the plugin 2...): the descendant
/// of `ancestor` (or `ancestor` itself) whose innermost pid (`NSpid:` in
/// `/proc/PID/status`) is `inner`.
pub fn outer_pid(ancestor: u32, inner: u32) -> Option<u32> {
    let innermost = |pid: u32| -> Option<u32> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|l| l.starts_with("NSpid:"))?;
        line.split_whitespace().last()?.parse().ok()
    };
    std::iter::once(ancestor)
        .chain(descendants(ancestor))
        .find(|p| innermost(*p) == Some(inner))
}

/// Watches a plugin's exit from a thread; see the module docs.
#[derive(Debug)]
pub struct ExitWatch {
    handle: Option<JoinHandle<Vec<u32>>>,
    stop: Arc<AtomicBool>,
}

impl ExitWatch {
    /// Start watching `leader` and the other group members `others`,
    /// polling every `poll`, for at most `limit`.
    pub fn start(leader: u32, others: Vec<u32>, poll: Duration, limit: Duration) -> ExitWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let deadline = Instant::now() + limit;
            let running = |pid: u32| proc_state(pid).is_some_and(|s| s.is_running());
            let mut last_alive: Vec<u32> = others.clone();
            // One look: Some(members that outlived the leader) once it exited.
            let look = |last_alive: &mut Vec<u32>| {
                let leader_state = proc_state(leader);
                let alive: Vec<u32> = others.iter().copied().filter(|p| running(*p)).collect();
                match leader_state {
                    Some(s) if s.is_running() => {
                        *last_alive = alive;
                        None
                    }
                    // Exited, not yet reaped: the host has not touched the group yet.
                    Some(_) => Some(alive),
                    // Already reaped: the host may be killing the group now.
                    None => Some(last_alive.clone()),
                }
            };
            while Instant::now() < deadline && !flag.load(Ordering::SeqCst) {
                if let Some(outlived) = look(&mut last_alive) {
                    return outlived;
                }
                std::thread::sleep(poll);
            }
            // Told to stop (or out of time): a last look, so that a leader
            // that exited between two polls is not missed on a busy machine.
            look(&mut last_alive).unwrap_or_default()
        });
        ExitWatch {
            handle: Some(handle),
            stop,
        }
    }

    /// Stop watching and return the members that outlived the leader
    /// (empty when the leader did not exit within the limit).
    pub fn finish(mut self) -> Vec<u32> {
        self.stop.store(true, Ordering::SeqCst);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for ExitWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_its_own_process() {
        let me = std::process::id();
        let s = proc_state(me).expect("own stat");
        assert!(s.is_running());
        assert!(group_members(s.pgrp).contains(&me));
        assert!(proc_state(u32::MAX).is_none());
    }
}
