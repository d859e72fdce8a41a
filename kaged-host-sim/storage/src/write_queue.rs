//! The write lock's queue: every plugin's write statements take turns at
//! the database's one write lock, first come, first served. SQLite's own
//! busy handler is no queue: a writer waiting on it sleeps and retries,
//! and a plugin writing back to back takes the lock again the moment it
//! frees it, so another plugin's write waited out its busy timeout and
//! answered `-32005` every time (issue 45). Here a write waits behind the
//! writes that came before it, each bounded by the write budget
//! (`kaged_host_core::time::STORAGE_WRITE_BUDGET`); a plugin's own calls
//! run one at a time (its connection's lock), so it holds one place in the
//! queue at most.
//!
//! ```
//! use std::time::Duration;
//! use kaged_host_storage::WriteQueue;
//! let q = WriteQueue::default();
//! let turn = q.enter(Duration::from_secs(1)).expect("a free lock");
//! // Taken: another writer waits, here in vain.
//! assert!(q.enter(Duration::from_millis(10)).is_none());
//! drop(turn);
//! assert!(q.enter(Duration::from_millis(10)).is_some());
//! ```

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
struct State {
    next: u64,
    holder: Option<u64>,
    waiting: VecDeque<u64>,
}

/// A first-come, first-served lock (see the module docs).
#[derive(Debug, Default)]
pub struct WriteQueue {
    state: Mutex<State>,
    turn: Condvar,
}

/// A writer's turn at the write lock; the next writer's comes when it drops.
#[derive(Debug)]
pub struct WriteTurn<'a> {
    queue: &'a WriteQueue,
}

impl WriteQueue {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait (at most `wait`) until every writer that came before has had
    /// its turn and the lock is free; `None` when `wait` ran out first (the
    /// writer leaves the queue).
    pub fn enter(&self, wait: Duration) -> Option<WriteTurn<'_>> {
        let deadline = Instant::now() + wait;
        let mut s = self.lock();
        let me = s.next;
        s.next += 1;
        s.waiting.push_back(me);
        loop {
            if s.holder.is_none() && s.waiting.front() == Some(&me) {
                s.waiting.pop_front();
                s.holder = Some(me);
                return Some(WriteTurn { queue: self });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                s.waiting.retain(|w| *w != me);
                drop(s);
                // The writer behind may be first now.
                self.turn.notify_all();
                return None;
            }
            s = self
                .turn
                .wait_timeout(s, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Drop for WriteTurn<'_> {
    fn drop(&mut self) {
        self.queue.lock().holder = None;
        self.queue.turn.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn writers_are_served_in_the_order_they_came() {
        let q = Arc::new(WriteQueue::default());
        let first = q.enter(Duration::from_secs(5)).expect("free");
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut threads = Vec::new();
        for i in 0..4 {
            let (mine, order) = (q.clone(), order.clone());
            threads.push(std::thread::spawn(move || {
                let _t = mine.enter(Duration::from_secs(30)).expect("a turn");
                order.lock().expect("order").push(i);
            }));
            // Each one queued before the next is started.
            while q.lock().waiting.len() < i + 1 {
                std::thread::yield_now();
            }
        }
        drop(first);
        for t in threads {
            t.join().expect("writer");
        }
        assert_eq!(*order.lock().expect("order"), [0, 1, 2, 3]);
    }

    #[test]
    fn a_writer_that_gives_up_leaves_the_queue() {
        let q = WriteQueue::default();
        let held = q.enter(Duration::from_secs(1)).expect("free");
        assert!(q.enter(Duration::from_millis(5)).is_none());
        assert!(q.lock().waiting.is_empty());
        drop(held);
        assert!(q.enter(Duration::ZERO).is_some());
    }
}
