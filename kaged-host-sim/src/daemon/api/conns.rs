//! The API's live connections, counted against the caps of
//! [`ApiLimits`]: each one with what the [`gate`](super::guard::gate)
//! learns of it (has it authenticated?) and what its watchdog needs (is a
//! request in flight, since when has it been quiet?).
//!
//! The total cap counts every connection that still holds its socket, a
//! shed one included until it is closed, so the API never holds more
//! descriptors than the cap; the per-peer cap counts the ones not shed.
//! When a cap is reached the oldest connection that has not authenticated
//! is shed: closed by its own task, woken for it.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;
use tokio::time::Instant;

use super::limits::ApiLimits;

/// Why a connection's watchdog closed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// A request's head did not arrive in the header-read timeout.
    HeaderRead,
    /// A kept-alive connection waited the idle timeout for a request.
    Idle,
}

/// When a connection was last busy.
#[derive(Debug)]
struct Activity {
    accepted: Instant,
    /// Requests received (heads read).
    requests: u64,
    /// Requests whose answer is not yet sent.
    in_flight: u32,
    /// When the last answer was sent.
    last_done: Instant,
    /// The first byte read since the last answer was sent.
    head_started: Option<Instant>,
}

/// One live connection.
#[derive(Debug)]
pub struct Conn {
    id: u64,
    peer: IpAddr,
    authenticated: AtomicBool,
    shed: AtomicBool,
    shed_signal: Notify,
    activity: Mutex<Activity>,
    /// Woken when its last request in flight ends.
    quiet: Notify,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Conn {
    fn new(id: u64, peer: IpAddr) -> Conn {
        let now = Instant::now();
        Conn {
            id,
            peer,
            authenticated: AtomicBool::new(false),
            shed: AtomicBool::new(false),
            shed_signal: Notify::new(),
            activity: Mutex::new(Activity {
                accepted: now,
                requests: 0,
                in_flight: 0,
                last_done: now,
                head_started: None,
            }),
            quiet: Notify::new(),
        }
    }

    /// The peer's address.
    pub fn peer(&self) -> IpAddr {
        self.peer
    }

    /// Mark the connection authenticated (it sent a request with the
    /// token): it is never shed to make room.
    pub fn authenticate(&self) {
        self.authenticated.store(true, Ordering::SeqCst);
    }

    /// Whether it sent a request with the token.
    pub fn is_authenticated(&self) -> bool {
        self.authenticated.load(Ordering::SeqCst)
    }

    /// Bytes were read from the socket.
    pub(super) fn read_some(&self) {
        let mut a = lock(&self.activity);
        if a.in_flight == 0 && a.head_started.is_none() {
            a.head_started = Some(Instant::now());
        }
    }

    /// A request's head was read: it is in flight until the guard is
    /// dropped (its answer sent, or abandoned).
    pub(super) fn request_started(self: &Arc<Conn>) -> InFlight {
        let mut a = lock(&self.activity);
        a.requests += 1;
        a.in_flight += 1;
        a.head_started = None;
        InFlight(Arc::clone(self))
    }

    /// When the watchdog closes the connection, unless something happens
    /// first; `None` while a request is in flight.
    pub(super) fn deadline(&self, limits: &ApiLimits) -> Option<(Instant, Expiry)> {
        let a = lock(&self.activity);
        if a.in_flight > 0 {
            None
        } else if a.requests == 0 {
            Some((a.accepted + limits.header_read, Expiry::HeaderRead))
        } else if let Some(t) = a.head_started {
            Some((t + limits.header_read, Expiry::HeaderRead))
        } else {
            Some((a.last_done + limits.idle, Expiry::Idle))
        }
    }

    /// Wait until the last request in flight ends (returns at once if it
    /// ended since the last call).
    pub(super) async fn quiet(&self) {
        self.quiet.notified().await;
    }

    /// Wait until the connection is shed.
    pub(super) async fn shed(&self) {
        self.shed_signal.notified().await;
    }

    fn mark_shed(&self) {
        self.shed.store(true, Ordering::SeqCst);
        self.shed_signal.notify_one();
    }

    fn is_shed(&self) -> bool {
        self.shed.load(Ordering::SeqCst)
    }

    /// Whether it may be shed to make room.
    fn sheddable(&self) -> bool {
        !self.is_authenticated() && !self.is_shed()
    }
}

/// A request in flight on a connection; dropped when its answer is sent.
#[derive(Debug)]
pub struct InFlight(Arc<Conn>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut a = lock(&self.0.activity);
        a.in_flight = a.in_flight.saturating_sub(1);
        if a.in_flight == 0 {
            a.last_done = Instant::now();
            a.head_started = None;
            self.0.quiet.notify_one();
        }
    }
}

#[derive(Debug, Default)]
struct Table {
    next_id: u64,
    /// Every connection holding its socket, oldest first.
    live: BTreeMap<u64, Arc<Conn>>,
    /// Connections not shed, per peer address.
    per_peer: HashMap<IpAddr, usize>,
}

impl Table {
    /// Shed the oldest sheddable connection (of `peer` when given).
    fn shed_oldest(&mut self, peer: Option<IpAddr>) -> bool {
        let victim = self
            .live
            .values()
            .find(|c| c.sheddable() && peer.is_none_or(|p| c.peer == p))
            .cloned();
        match victim {
            Some(c) => {
                c.mark_shed();
                self.forget_peer(c.peer);
                tracing::debug!(peer = %c.peer, id = c.id, "API connection shed to make room");
                true
            }
            None => false,
        }
    }

    fn forget_peer(&mut self, peer: IpAddr) {
        if let Some(n) = self.per_peer.get_mut(&peer) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_peer.remove(&peer);
            }
        }
    }
}

/// Every live connection of the API; see the module docs.
#[derive(Debug)]
pub struct Conns {
    limits: ApiLimits,
    table: Mutex<Table>,
    /// Woken when a connection is closed.
    freed: Notify,
}

impl Conns {
    /// An empty table under `limits`.
    pub fn new(limits: ApiLimits) -> Arc<Conns> {
        Arc::new(Conns {
            limits,
            table: Mutex::new(Table::default()),
            freed: Notify::new(),
        })
    }

    /// The limits.
    pub fn limits(&self) -> &ApiLimits {
        &self.limits
    }

    /// Connections holding their socket.
    pub fn len(&self) -> usize {
        lock(&self.table).live.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Wait until one more connection fits under the total cap, shedding
    /// the oldest unauthenticated one when none does. Call before
    /// accepting: what waits meanwhile waits in the kernel's backlog.
    pub async fn room(&self) {
        loop {
            {
                let mut t = lock(&self.table);
                let shedding = t.live.values().filter(|c| c.is_shed()).count();
                if t.live.len() < self.limits.max_connections {
                    return;
                }
                // One shed at a time is enough to make room for one.
                if shedding == 0 {
                    t.shed_oldest(None);
                }
            }
            self.freed.notified().await;
        }
    }

    /// Take a newly accepted connection from `peer` into the table,
    /// shedding the peer's oldest unauthenticated one when the peer is at
    /// its cap; `None` (refuse it) when every one of those authenticated.
    pub fn admit(self: &Arc<Conns>, peer: IpAddr) -> Option<Registration> {
        let mut t = lock(&self.table);
        let held = t.per_peer.get(&peer).copied().unwrap_or(0);
        if held >= self.limits.max_per_peer && !t.shed_oldest(Some(peer)) {
            return None;
        }
        let id = t.next_id;
        t.next_id += 1;
        let conn = Arc::new(Conn::new(id, peer));
        t.live.insert(id, Arc::clone(&conn));
        *t.per_peer.entry(peer).or_insert(0) += 1;
        Some(Registration {
            conns: Arc::clone(self),
            conn,
        })
    }
}

/// A connection's place in the table, given back when dropped (its socket
/// closed).
#[derive(Debug)]
pub struct Registration {
    conns: Arc<Conns>,
    conn: Arc<Conn>,
}

impl Registration {
    /// The connection.
    pub fn conn(&self) -> &Arc<Conn> {
        &self.conn
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut t = lock(&self.conns.table);
        t.live.remove(&self.conn.id);
        if !self.conn.is_shed() {
            t.forget_peer(self.conn.peer);
        }
        drop(t);
        self.conns.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;
    use kaged_host_core::time::TimeScale;

    fn conns(max: usize) -> Arc<Conns> {
        let mut limits = ApiLimits::new(TimeScale::FULL, None);
        limits.max_connections = max;
        limits.max_per_peer = max / 2;
        Conns::new(limits)
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[tokio::test]
    async fn the_oldest_unauthenticated_connection_is_shed_for_room() {
        let c = conns(4);
        let a = c.admit(ip(1)).expect("a");
        let b = c.admit(ip(1)).expect("b");
        let x = c.admit(ip(2)).expect("x");
        let y = c.admit(ip(2)).expect("y");
        a.conn().authenticate();
        // Full: room sheds b (the oldest not authenticated), not a.
        let room = c.room();
        tokio::pin!(room);
        assert!(room.as_mut().now_or_never().is_none());
        assert!(b.conn().is_shed() && !a.conn().is_shed() && !x.conn().is_shed());
        drop(b);
        room.await;
        assert_eq!(c.len(), 3);
        drop((x, y, a));
        assert!(c.is_empty());
    }

    #[tokio::test]
    async fn a_peer_at_its_cap_sheds_its_own_oldest_or_is_refused() {
        let c = conns(8);
        let held: Vec<Registration> = (0..4).map(|_| c.admit(ip(1)).expect("one")).collect();
        let other = c.admit(ip(2)).expect("another peer");
        // The fifth from 127.0.0.1 sheds its first, never 127.0.0.2's.
        let fifth = c.admit(ip(1)).expect("room made");
        assert!(held[0].conn().is_shed() && !other.conn().is_shed());
        assert_eq!(c.len(), 6);
        for r in held.iter().skip(1) {
            r.conn().authenticate();
        }
        fifth.conn().authenticate();
        // Every one of the peer's authenticated: refused.
        assert!(c.admit(ip(1)).is_none());
        assert!(c.admit(ip(2)).is_some());
    }

    #[test]
    fn the_watchdog_deadline_follows_the_requests() {
        let c = conns(8);
        let r = c.admit(ip(1)).expect("one");
        let limits = *c.limits();
        let conn = r.conn();
        let (_, why) = conn.deadline(&limits).expect("a deadline");
        assert_eq!(why, Expiry::HeaderRead);
        let request = conn.request_started();
        assert_eq!(conn.deadline(&limits), None);
        drop(request);
        assert_eq!(conn.deadline(&limits).map(|d| d.1), Some(Expiry::Idle));
        conn.read_some();
        assert_eq!(
            conn.deadline(&limits).map(|d| d.1),
            Some(Expiry::HeaderRead)
        );
    }
}
