//! What `/proc` says of a plugin: the CPU time and resident memory of its
//! process and every descendant (a caged plugin runs under bwrap). CPU
//! time is each thread's on-CPU time from `schedstat` (nanoseconds), or,
//! where the kernel keeps none, user + system ticks from `stat` (10 ms).

use std::collections::HashMap;
use std::time::Duration;

/// Clock ticks per second of `/proc/<pid>/stat` times (`USER_HZ`, 100 on
/// every Linux architecture the kit runs on).
const USER_HZ: u64 = 100;

/// CPU time and memory of a process tree, at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeUsage {
    /// User + system CPU time of every process of the tree.
    pub cpu: Duration,
    /// Resident memory of every process of the tree, in KiB.
    pub rss_kib: u64,
}

/// `(ppid, utime + stime ticks)` from a `/proc/<pid>/stat` line.
fn parse_stat(line: &str) -> Option<(u32, u64)> {
    // The command name is in parentheses and may hold spaces.
    let rest = &line[line.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state(0) ppid(1) ... utime(11) stime(12).
    let ppid = fields.get(1)?.parse().ok()?;
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((ppid, utime + stime))
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

/// The usage of `root` and its descendants; `None` without `/proc`.
pub fn tree_usage(root: u32) -> Option<TreeUsage> {
    let mut stats: HashMap<u32, (u32, u64)> = HashMap::new();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(s) = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|l| parse_stat(&l))
        {
            stats.insert(pid, s);
        }
    }
    stats.get(&root)?;
    let in_tree = |mut pid: u32| {
        for _ in 0..64 {
            if pid == root {
                return true;
            }
            match stats.get(&pid) {
                Some((ppid, _)) if *ppid != 0 => pid = *ppid,
                _ => return false,
            }
        }
        false
    };
    let mut usage = TreeUsage::default();
    for (&pid, &(_, ticks)) in &stats {
        if in_tree(pid) {
            usage.cpu +=
                schedstat_cpu(pid).unwrap_or_else(|| Duration::from_millis(ticks * 1000 / USER_HZ));
            usage.rss_kib += rss_kib(pid);
        }
    }
    Some(usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_with_spaces_in_the_name_parses() {
        let line = "42 (my plugin) S 7 42 42 0 -1 4194560 100 0 0 0 15 4 0 0 20 0 1 0 1 2 3";
        assert_eq!(parse_stat(line), Some((7, 19)));
    }

    #[test]
    fn this_process_has_a_usage() {
        let me = std::process::id();
        let u = tree_usage(me).expect("/proc");
        assert!(u.rss_kib > 0);
    }
}
