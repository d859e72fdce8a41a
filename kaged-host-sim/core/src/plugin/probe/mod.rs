//! Process probes for the conformance suite: which processes belong to a
//! plugin's process group, and whether any of them outlived the plugin.
//!
//! The host kills and reaps a plugin's whole process group as soon as the
//! plugin exits, so "did the plugin leave a child behind?" can only be
//! answered by watching the group while the plugin exits. [`ExitWatch`]
//! looks at `/proc` from a thread of its own: when it sees the leader
//! exited (a zombie, not yet reaped) while another member of its group is
//! still running, that member outlived the plugin.
//!
//! Caged, that look is made certain by the kernel, not by polling fast: the
//! watch stops the cage's init (`hold`, with SIGSTOP from the host's pid
//! namespace, which a namespace's init cannot refuse) for as long as it
//! watches. A stopped init cannot reap the exited plugin, so the plugin
//! stays a zombie; and the cage ends (the kernel killing what is left in
//! it) only once init has reaped it and exited, so whatever ran when the
//! plugin exited still runs when the watch looks. The watch continues
//! init once it has looked, or at its limit, or when dropped.
//!
//! Uncaged there is no init to hold: each look reads the members before the
//! leader, and when the leader is already reaped (the host may be killing
//! the group) the members running at the last look while the leader still
//! ran are reported (they ended no earlier than the leader, up to one poll
//! interval).
//!
//! ```no_run
//! use std::time::Duration;
//! use kaged_host_core::probe::{group_members, ExitWatch};
//! let pgid = 4242;
//! let others: Vec<u32> = group_members(pgid).into_iter().filter(|p| *p != pgid).collect();
//! let watch = ExitWatch::start(pgid, others, None, Duration::from_millis(1), Duration::from_secs(5));
//! // ... ask the plugin to exit ...
//! let survivors = watch.finish();
//! assert!(survivors.is_empty());
//! ```

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};

mod usage;

pub use usage::{process_usage, tree_usage, TreeUsage};

/// One line of `/proc/PID/stat`, the fields the probes need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcState {
    /// The process id.
    pub pid: u32,
    /// The parent's process id.
    pub ppid: u32,
    /// The process group id.
    pub pgrp: u32,
    /// The state letter (`R`, `S`, `Z`...).
    pub state: char,
}

impl ProcState {
    /// Whether the process still runs (not a zombie, not dead).
    pub fn is_running(&self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Read `/proc/PID/stat`; `None` when the process does not exist.
pub fn proc_state(pid: u32) -> Option<ProcState> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp ...`; comm may contain spaces and parens.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(ProcState {
        pid,
        ppid,
        pgrp,
        state,
    })
}

fn all_processes() -> Vec<ProcState> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(proc_state)
        .collect()
}

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

/// Every running descendant of `pid` (children, grandchildren...), in any
/// process group: a child that left the plugin's group escapes the host's
/// group kill.
pub fn descendants(pid: u32) -> Vec<u32> {
    let procs = all_processes();
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            procs
                .iter()
                .filter(|p| p.ppid == parent && p.is_running() && !found.contains(&p.pid))
                .map(|p| p.pid)
                .collect::<Vec<_>>(),
        );
        i += 1;
    }
    found.remove(0);
    found.sort_unstable();
    found
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
    hold: Option<Arc<Hold>>,
}

/// A process stopped while the watch runs (the cage's init), signalled
/// through a pidfd (so a reused pid is never signalled).
#[derive(Debug)]
struct Hold(OwnedFd);

impl Hold {
    /// Stop `pid`; `None` when it cannot be (gone, or not ours to signal):
    /// the watch then looks as it does uncaged.
    fn stop(pid: u32) -> Option<Hold> {
        let pid = Pid::from_raw(i32::try_from(pid).ok()?)?;
        let pidfd = pidfd_open(pid, PidfdFlags::empty()).ok()?;
        pidfd_send_signal(&pidfd, Signal::STOP).ok()?;
        Some(Hold(pidfd))
    }

    /// Continue the held process (the watch's thread once it has looked,
    /// and the watch when dropped: a second SIGCONT changes nothing, and
    /// to an ended process it goes nowhere).
    fn release(&self) {
        let _ = pidfd_send_signal(&self.0, Signal::CONT);
    }
}

impl ExitWatch {
    /// Start watching `leader` and the other group members `others`,
    /// polling every `poll`, for at most `limit`; with `hold` (the cage's
    /// init), stopped until the watch has looked (see the module docs).
    pub fn start(
        leader: u32,
        others: Vec<u32>,
        hold: Option<u32>,
        poll: Duration,
        limit: Duration,
    ) -> ExitWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let hold = hold.and_then(Hold::stop).map(Arc::new);
        let held = hold.clone();
        let handle = std::thread::spawn(move || {
            let deadline = Instant::now() + limit;
            let running = |pid: u32| proc_state(pid).is_some_and(|s| s.is_running());
            let mut last_alive: Vec<u32> = others.clone();
            // One look: Some(members that outlived the leader) once it
            // exited. The members are read first: a leader seen running
            // after them ran when they were read.
            let look = |last_alive: &mut Vec<u32>| {
                let alive: Vec<u32> = others.iter().copied().filter(|p| running(*p)).collect();
                match proc_state(leader) {
                    Some(s) if s.is_running() => {
                        *last_alive = alive;
                        None
                    }
                    // Exited, not yet reaped: nothing has touched the group yet.
                    Some(_) => Some(alive),
                    // Already reaped: the host may be killing the group now.
                    None => Some(last_alive.clone()),
                }
            };
            let mut outlived = None;
            while outlived.is_none() && Instant::now() < deadline && !flag.load(Ordering::SeqCst) {
                outlived = look(&mut last_alive);
                if outlived.is_none() {
                    std::thread::sleep(poll);
                }
            }
            // Told to stop (or out of time): a last look, so that a leader
            // that exited between two polls is not missed on a busy machine.
            let outlived = outlived.or_else(|| look(&mut last_alive));
            if let Some(h) = &held {
                h.release();
            }
            outlived.unwrap_or_default()
        });
        ExitWatch {
            handle: Some(handle),
            stop,
            hold,
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
        if let Some(h) = &self.hold {
            h.release();
        }
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
