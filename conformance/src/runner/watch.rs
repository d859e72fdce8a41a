//! Watching a plugin's process group while it exits, for
//! `lifecycle.no_orphans`. Like `kaged_host_sim::probe::ExitWatch`, but it
//! takes one last look when told to stop, so that a watch thread the
//! scheduler did not run between the leader's exit and [`GroupWatch::finish`]
//! still reports what it would have seen (the host-sim's watch returns
//! nothing in that case, which made the case pass on a loaded machine).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kaged_host_sim::probe::proc_state;

/// A running watch over a group leader and the other members of its group.
pub(crate) struct GroupWatch {
    handle: Option<JoinHandle<Vec<u32>>>,
    stop: Arc<AtomicBool>,
}

/// What one look at the group found.
enum Look {
    /// The leader still runs; these members run too.
    Running(Vec<u32>),
    /// The leader has ended; the members that outlived it.
    Ended(Vec<u32>),
}

fn look(leader: u32, others: &[u32], last_alive: &[u32]) -> Look {
    let running = |pid: u32| proc_state(pid).is_some_and(|s| s.is_running());
    let alive: Vec<u32> = others.iter().copied().filter(|p| running(*p)).collect();
    match proc_state(leader) {
        Some(s) if s.is_running() => Look::Running(alive),
        // Exited, not yet reaped: the host has not touched the group yet.
        Some(_) => Look::Ended(alive),
        // Already reaped: the host may be killing the group now; report the
        // members seen running while the leader still ran.
        None => Look::Ended(last_alive.to_vec()),
    }
}

impl GroupWatch {
    /// Watch `leader` and `others`, polling every `poll`, for at most `limit`.
    pub(crate) fn start(
        leader: u32,
        others: Vec<u32>,
        poll: Duration,
        limit: Duration,
    ) -> GroupWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let deadline = Instant::now() + limit;
            let mut last_alive = others.clone();
            loop {
                let stopping = flag.load(Ordering::SeqCst) || Instant::now() >= deadline;
                match look(leader, &others, &last_alive) {
                    Look::Ended(outlived) => return outlived,
                    Look::Running(alive) => last_alive = alive,
                }
                if stopping {
                    return Vec::new();
                }
                std::thread::sleep(poll);
            }
        });
        GroupWatch {
            handle: Some(handle),
            stop,
        }
    }

    /// Stop (after one last look) and return the members that outlived the
    /// leader; empty when the leader still runs.
    pub(crate) fn finish(mut self) -> Vec<u32> {
        self.stop.store(true, Ordering::SeqCst);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for GroupWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}
