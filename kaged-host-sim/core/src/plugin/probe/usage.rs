//! What `/proc` says of a plugin: the CPU time and resident memory of its
//! process and every descendant (a caged plugin runs under bwrap). CPU
//! time is each thread's on-CPU time from `schedstat` (nanoseconds), or,
//! where the kernel keeps none, user + system ticks from `stat` (10 ms).

use std::time::Duration;

use super::descendants;

/// Clock ticks per second of `/proc/<pid>/stat` times (`USER_HZ`, 100 on
/// every Linux architecture the kit runs on).
const USER_HZ: u64 = 100;

/// CPU time and memory of a process, or of a process tree, at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeUsage {
    /// User + system CPU time of every process of the tree.
    pub cpu: Duration,
    /// Time the tree's threads were runnable but waiting for a CPU
    /// (`schedstat`; zero where the kernel keeps none).
    pub waiting: Duration,
    /// Threads of the tree running, runnable or in uninterruptible sleep
    /// (disk I/O) when read: none when the tree is blocked on input.
    pub active_threads: u32,
    /// Resident memory of every process of the tree, in KiB.
    pub rss_kib: u64,
}

impl TreeUsage {
    /// Time on a CPU or waiting for one: what a process blocked on input
    /// does not accumulate. A starved process uses no CPU yet is not idle,
    /// so "idle" is this not growing, not [`cpu`](Self::cpu).
    pub fn busy(&self) -> Duration {
        self.cpu + self.waiting
    }
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

/// On-CPU time and run-queue wait of every thread of `pid`, from
/// `/proc/<pid>/task/*/schedstat` (nanoseconds); `None` where the kernel
/// does not keep it.
fn schedstat(pid: u32) -> Option<(Duration, Duration)> {
    let (mut on_cpu, mut waiting) = (0u64, 0u64);
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let text = std::fs::read_to_string(t.path().join("schedstat")).ok()?;
        let mut fields = text.split_whitespace();
        on_cpu += fields.next()?.parse::<u64>().ok()?;
        waiting += fields.next()?.parse::<u64>().ok()?;
    }
    Some((Duration::from_nanos(on_cpu), Duration::from_nanos(waiting)))
}

/// The threads of `pid` in state `R` (running or runnable) or `D`
/// (uninterruptible sleep), from `/proc/<pid>/task/*/stat`.
fn active_threads(pid: u32) -> u32 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    let active = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("stat")).ok())
        .filter(|line| {
            line.rfind(')')
                .and_then(|i| line[i + 1..].split_whitespace().next())
                .is_some_and(|state| state == "R" || state == "D")
        })
        .count();
    u32::try_from(active).unwrap_or(u32::MAX)
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
    let (cpu, waiting) = schedstat(pid).unwrap_or_else(|| {
        (
            Duration::from_millis(ticks * 1000 / USER_HZ),
            Duration::ZERO,
        )
    });
    Some(TreeUsage {
        cpu,
        waiting,
        active_threads: active_threads(pid),
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
            usage.waiting += u.waiting;
            usage.active_threads += u.active_threads;
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
