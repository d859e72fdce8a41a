//! What one client may hold of the API, so that clients without the token
//! cannot exhaust the daemon (its file descriptors, its plugins' restarts,
//! the operator's own requests):
//!
//! * the header-read timeout ([`API_HEADER_READ_TIMEOUT_SEC`], 10 s,
//!   scaled): a connection must send its first request's whole head that
//!   long after it was accepted, a kept-alive one its next request's head
//!   that long after that request's first byte;
//! * the idle timeout ([`API_IDLE_TIMEOUT_SEC`], 30 s, scaled): a
//!   kept-alive connection with no request in flight is closed after that
//!   long (a stream of server-sent events is a request in flight; a
//!   WebSocket leaves HTTP, and the count, once upgraded);
//! * a cap on connections: a quarter of the daemon's `RLIMIT_NOFILE` soft
//!   limit, at least [`MIN_CONNECTIONS`] and at most [`MAX_CONNECTIONS`]
//!   (256 under the usual limit of 1024, 64 under 256), the other
//!   three quarters left to the plugins and the daemon's own files; and a
//!   cap per peer address, half of that. When a cap is reached, the
//!   oldest connection that has not authenticated (sent a request with the
//!   valid token) is closed to make room; when every one has, the new
//!   connection waits (total cap) or is refused (per-peer cap).
//!
//! On loopback a peer is an address of `127.0.0.0/8` (or `::1`), which a
//! local client may pick: the per-peer cap bounds the common case, the
//! total cap and the shedding bound every case.

use std::time::Duration;

use kaged_host_core::time::{TimeScale, API_HEADER_READ_TIMEOUT_SEC, API_IDLE_TIMEOUT_SEC};

/// The fewest connections the total cap allows, however low the limit.
pub const MIN_CONNECTIONS: usize = 8;
/// The most connections the total cap allows, however high the limit.
pub const MAX_CONNECTIONS: usize = 512;
/// The share of `RLIMIT_NOFILE` the API may hold: one in this many.
pub const FD_SHARE: u64 = 4;
/// The listening socket's backlog (capped by the kernel's
/// `net.core.somaxconn`): connections the kernel holds for the API while
/// it accepts and sheds. They hold no descriptor of the daemon's.
pub const LISTEN_BACKLOG: u32 = 4096;
/// Accepts in a row before the accept loop lets the connections it
/// accepted read their requests.
pub const ACCEPT_BATCH: usize = 8;

/// The API's timeouts (scaled) and connection caps; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiLimits {
    /// Time to send a request's whole head.
    pub header_read: Duration,
    /// Time a kept-alive connection may wait for its next request.
    pub idle: Duration,
    /// Connections held at once, all peers together.
    pub max_connections: usize,
    /// Connections held at once from one peer address.
    pub max_per_peer: usize,
}

impl ApiLimits {
    /// The limits at `scale` for a process whose descriptor limit is
    /// `nofile` (`None`: unlimited).
    pub fn new(scale: TimeScale, nofile: Option<u64>) -> ApiLimits {
        let share = nofile.map_or(u64::MAX, |n| n / FD_SHARE);
        let max_connections = usize::try_from(share)
            .unwrap_or(usize::MAX)
            .clamp(MIN_CONNECTIONS, MAX_CONNECTIONS);
        ApiLimits {
            header_read: scale.secs(API_HEADER_READ_TIMEOUT_SEC),
            idle: scale.secs(API_IDLE_TIMEOUT_SEC),
            max_connections,
            max_per_peer: (max_connections / 2).max(1),
        }
    }

    /// The limits at `scale` for this process, from its `RLIMIT_NOFILE`
    /// soft limit.
    pub fn for_this_process(scale: TimeScale) -> ApiLimits {
        let nofile = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        ApiLimits::new(scale, nofile)
    }

    /// One line for the operational log.
    pub fn describe(&self) -> String {
        format!(
            "header-read timeout {:?}, idle timeout {:?}, at most {} connections ({} per peer address)",
            self.header_read, self.idle, self.max_connections, self.max_per_peer
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caps_follow_the_descriptor_limit_and_the_timeouts_the_scale() {
        let full = ApiLimits::new(TimeScale::FULL, Some(256));
        assert_eq!((full.max_connections, full.max_per_peer), (64, 32));
        assert_eq!(full.header_read, Duration::from_secs(10));
        assert_eq!(full.idle, Duration::from_secs(30));
        let scaled = ApiLimits::new(TimeScale::new(0.1).expect("scale"), Some(20));
        assert_eq!(scaled.max_connections, MIN_CONNECTIONS);
        assert_eq!(scaled.header_read, Duration::from_secs(1));
        assert_eq!(scaled.idle, Duration::from_secs(3));
        assert_eq!(
            ApiLimits::new(TimeScale::FULL, None).max_connections,
            MAX_CONNECTIONS
        );
        assert_eq!(
            ApiLimits::new(TimeScale::FULL, Some(1 << 20)).max_connections,
            MAX_CONNECTIONS
        );
    }
}
