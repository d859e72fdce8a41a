//! What `/proc` says of a plugin: the CPU time and resident memory of its
//! process and every descendant (a caged plugin runs under bwrap). CPU
//! time is each thread's on-CPU time from `schedstat` (nanoseconds), or,
//! where the kernel keeps none, user + system ticks from `stat` (10 ms).
//! Also the `/proc/PID/stat` reading the probes build on ([`proc_state`],
//! [`descendants`]).

use std::time::Duration;

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

/// Every process in `/proc`.
pub(crate) fn all_processes() -> Vec<ProcState> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(proc_state)
        .collect()
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

/// Clock ticks per second of `/proc/<pid>/stat` times (`USER_HZ`, 100 on
/// every Linux architecture the kit runs on).
const USER_HZ: u64 = 100;

/// CPU time and memory of a process, or of a process tree, at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeUsage {
    /// User + system CPU time of every process of the tree.
    pub cpu: Duration,
    /// Resident memory of every process of the tree, in KiB.
    pub rss_kib: u64,
}

/// `utime + stime` (ticks) from a `/proc/<pid>/stat` line.
fn parse_stat(line: &str) -> Option<u64> {
    // The command name is in parentheses and may hold spaces.
    let rest = &line[line.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state(0) ppid(1) ... utime(11) stime(12).
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// On-CPU time of every thread of `pid`, from `/proc/<pid>/task/*/schedstat`
/// (nanoseconds); `None` where the kernel does not keep it.
fn schedstat_cpu(pid: u32) -> Option<Duration> {
    let mut ns = 0u64;
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let text = std::fs::read_to_string(t.path().join("schedstat")).ok()?;
        ns += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(ns))
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// The usage of the process `pid` alone (its threads, not its children);
/// `None` without `/proc` or once it is gone.
pub fn process_usage(pid: u32) -> Option<TreeUsage> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let ticks = parse_stat(&stat)?;
    Some(TreeUsage {
        cpu: schedstat_cpu(pid).unwrap_or_else(|| Duration::from_millis(ticks * 1000 / USER_HZ)),
        rss_kib: rss_kib(pid),
    })
}

/// The usage of `root` and its running descendants
/// ([`descendants`](crate::probe::descendants)); `None` without `/proc` or
/// once `root` is gone.
pub fn tree_usage(root: u32) -> Option<TreeUsage> {
    let mut usage = process_usage(root)?;
    for pid in descendants(root) {
        if let Some(u) = process_usage(pid) {
            usage.cpu += u.cpu;
            usage.rss_kib += u.rss_kib;
        }
    }
    Some(usage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::probe::proc_state;

    #[test]
    fn a_stat_line_with_spaces_in_the_name_parses() {
        let line = "42 (my plugin) S 7 42 42 0 -1 4194560 100 0 0 0 15 4 0 0 20 0 1 0 1 2 3";
        assert_eq!(parse_stat(line), Some(19));
    }

    #[test]
    fn this_process_has_a_usage() {
        let me = process_usage(std::process::id()).expect("/proc");
        assert!(me.rss_kib > 0);
    }

    /// A shell waiting on a `sleep`: two idle processes whose memory does
    /// not move, so the tree's sum can be checked exactly.
    #[test]
    fn a_tree_sums_its_root_and_descendants() {
        let mut sh = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .spawn()
            .expect("sh");
        let root = sh.id();
        // Wait for the event: the child has become `sleep` and sleeps.
        let settled = |pid: &u32| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            comm.trim() == "sleep" && proc_state(*pid).is_some_and(|p| p.state == 'S')
        };
        let kids = loop {
            let kids = descendants(root);
            if kids.iter().any(settled) && proc_state(root).is_some_and(|p| p.state == 'S') {
                break kids;
            }
            assert!(sh.try_wait().expect("sh").is_none(), "sh ended early");
            std::thread::yield_now();
        };
        let tree = tree_usage(root).expect("/proc");
        let alone = process_usage(root).expect("/proc");
        let kid = process_usage(kids[0]).expect("/proc");
        assert!(alone.rss_kib > 0 && kid.rss_kib > 0);
        assert_eq!(tree.rss_kib, alone.rss_kib + kid.rss_kib);
        for pid in kids {
            let _ = rustix::process::kill_process(
                rustix::process::Pid::from_raw(pid as i32).expect("pid"),
                rustix::process::Signal::KILL,
            );
        }
        let _ = sh.kill();
        let _ = sh.wait();
    }
}
