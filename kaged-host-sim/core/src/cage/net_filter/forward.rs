//! A forwarded connect, made by the host in its own network namespace:
//! the route's address, or the granted name resolved now (keeping only
//! what [`resolved_ok`] allows), each address tried in turn (the plugin's
//! socket's family first), the whole bounded by
//! [`NET_CONNECT_TIMEOUT`](crate::time::NET_CONNECT_TIMEOUT). Asynchronous:
//! the runtime is never blocked (the name lookup is tokio's, on its
//! blocking pool).

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpSocket;

use super::decide::{resolved_ok, Route};

/// Why a forwarded connect did not happen.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    /// The name resolved to nothing the plugin may reach.
    #[error("{0}")]
    Refused(String),
    /// The connect (or the lookup) failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// Not within the time allowed.
    #[error("no connection within {0:?}")]
    TimedOut(Duration),
}

impl ForwardError {
    /// The errno the plugin's `connect` returns.
    pub fn errno(&self) -> i32 {
        match self {
            ForwardError::Refused(_) => libc::ECONNREFUSED,
            ForwardError::Io(e) => e.raw_os_error().unwrap_or(libc::ECONNREFUSED),
            ForwardError::TimedOut(_) => libc::ETIMEDOUT,
        }
    }
}

/// Connect to `route` within `limit`, IPv6 addresses first when
/// `prefer_v6` (the plugin's socket is `AF_INET6`).
pub async fn connect(
    route: &Route,
    prefer_v6: bool,
    limit: Duration,
) -> Result<std::net::TcpStream, ForwardError> {
    match tokio::time::timeout(limit, connect_any(route, prefer_v6)).await {
        Ok(r) => r,
        Err(_) => Err(ForwardError::TimedOut(limit)),
    }
}

async fn connect_any(route: &Route, prefer_v6: bool) -> Result<std::net::TcpStream, ForwardError> {
    let mut addrs: Vec<SocketAddr> = match route {
        Route::Addr(a) => vec![*a],
        Route::Name { host, port } => {
            let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), *port))
                .await?
                .collect();
            let kept: Vec<SocketAddr> = all
                .iter()
                .copied()
                .filter(|a| resolved_ok(a.ip()).is_ok())
                .collect();
            if kept.is_empty() {
                let why = all
                    .first()
                    .and_then(|a| resolved_ok(a.ip()).err())
                    .unwrap_or("it resolves to no address");
                return Err(ForwardError::Refused(format!("{host}: {why}")));
            }
            kept
        }
    };
    addrs.sort_by_key(|a| a.is_ipv6() != prefer_v6);
    let mut last = io::Error::from_raw_os_error(libc::ECONNREFUSED);
    for addr in addrs {
        let socket = if addr.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        match socket.connect(addr).await {
            Ok(stream) => return Ok(stream.into_std()?),
            Err(e) => last = e,
        }
    }
    Err(ForwardError::Io(last))
}
