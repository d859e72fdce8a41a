//! Where the bench's threads run: the host's threads and the plugin are
//! pinned to chosen CPUs, so that the comparison measures the plugins and
//! not the kernel's placement luck.
//!
//! Unpinned, on a 2-core VM, the same two binaries measured anywhere from
//! 25% to 277% of each other between runs, and swapping which plugin ran
//! first turned 64% into 134%: a wakeup that crosses CPUs costs tens of
//! microseconds there, and which process shares a CPU with which host
//! thread is decided by history, not by the code under test.

use rustix::process::Pid;
use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};

/// A placement of the host and the plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// The host's threads on one CPU, the plugin on another.
    Split,
    /// The host and the plugin share one CPU.
    Shared,
    /// No pinning: wherever the kernel puts them (informational).
    Free,
}

impl Layout {
    /// Every layout, in the order they are measured.
    pub const ALL: [Layout; 3] = [Layout::Split, Layout::Shared, Layout::Free];

    /// The layout's name on the command line and in the table.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Split => "split",
            Layout::Shared => "shared",
            Layout::Free => "free",
        }
    }

    /// One line saying what the layout is.
    pub fn describe(self) -> &'static str {
        match self {
            Layout::Split => "host threads on one CPU, the plugin on another",
            Layout::Shared => "host and plugin on the same single CPU",
            Layout::Free => "unpinned: the kernel's placement decides (informational)",
        }
    }

    /// Whether the goal is judged on this layout.
    pub fn judged(self) -> bool {
        self != Layout::Free
    }

    /// Parse a name.
    pub fn parse(s: &str) -> Option<Layout> {
        Layout::ALL.into_iter().find(|l| l.name() == s.trim())
    }

    /// The CPU sets for the host and the plugin, from the CPUs this process
    /// may use; `None` when the layout needs more CPUs than there are.
    pub fn cpus(self, allowed: &[usize]) -> Option<(CpuSet, CpuSet)> {
        let set = |cpus: &[usize]| {
            let mut s = CpuSet::new();
            cpus.iter().for_each(|&c| s.set(c));
            s
        };
        match (self, allowed) {
            (Layout::Split, [host, plugin, ..]) => Some((set(&[*host]), set(&[*plugin]))),
            (Layout::Shared, [cpu, ..]) => Some((set(&[*cpu]), set(&[*cpu]))),
            (Layout::Free, [_, ..]) => Some((set(allowed), set(allowed))),
            _ => None,
        }
    }
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> std::io::Result<Vec<usize>> {
    let set = sched_getaffinity(None)?;
    Ok((0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect())
}

/// Pin every thread of process `pid` (this process when `None`).
pub fn pin(pid: Option<u32>, cpus: &CpuSet) -> Result<(), String> {
    let dir = match pid {
        Some(p) => format!("/proc/{p}/task"),
        None => "/proc/self/task".to_string(),
    };
    let tasks = std::fs::read_dir(&dir).map_err(|e| format!("{dir}: {e}"))?;
    for task in tasks.flatten() {
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<i32>().ok())
            .and_then(Pid::from_raw)
        else {
            continue;
        };
        // A thread may have ended since the listing: that is not an error.
        match sched_setaffinity(Some(tid), cpus) {
            Ok(()) | Err(rustix::io::Errno::SRCH) => {}
            Err(e) => return Err(format!("pinning thread {tid:?} of {dir}: {e}")),
        }
    }
    Ok(())
}
