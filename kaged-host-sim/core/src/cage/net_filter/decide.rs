//! The decision, pure: a `connect(2)` address, the grants and the
//! stand-in table → made in the cage, forwarded by the host, or refused
//! (ADDENDUM §16 "`net:` grants are enforced").
//!
//! - A stand-in address (`super::super::net_grants`) is its granted name:
//!   forwarded when a grant of that name allows the port.
//! - A literal address is forwarded when a grant names it (an IPv4 address
//!   in IPv6 form, `::ffff:a.b.c.d`, is its IPv4 form), or when it is
//!   127.0.0.1 or ::1 and a `localhost` grant allows the port.
//! - Not granted: the cage's own loopback (127.0.0.0/8, ::1, the
//!   unspecified address) stays in the cage, whose network namespace has
//!   no host service; any other address is refused, a link-local one
//!   (169.254.0.0/16, fe80::/10) by name in the reason.
//! - Only TCP is forwarded: a granted UDP (or other datagram) connect is
//!   refused too (a host UDP socket handed to the plugin would send to any
//!   address: `sendto` with a destination overrides the connected peer).
//!
//! A granted *name* is resolved by the host at connect time; what it
//! resolves to is kept only when [`resolved_ok`] (no link-local, loopback
//! or unspecified address: those are reached by a grant that names them).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use crate::cage::net_grants::{NetGrant, NetHost, StandIn};
use crate::cage::NetPolicy;

/// What a `connect(2)` asks for, read from the plugin's `sockaddr`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `AF_INET` / `AF_INET6`.
    Inet(SocketAddr),
    /// `AF_UNIX`: resolved in the cage's own mount and network namespace.
    Unix,
    /// `AF_NETLINK`: the cage's own network namespace's.
    Netlink,
    /// `AF_UNSPEC`: dissolve the socket's association.
    Unspec,
    /// Another family (its number).
    Other(u16),
}

/// The `sockaddr` in `bytes` (as many as the call's `addrlen`, at most
/// 128), or `None` when it is too short for its family.
pub fn parse_sockaddr(bytes: &[u8]) -> Option<Target> {
    let family = u16::from_ne_bytes([*bytes.first()?, *bytes.get(1)?]);
    let be16 = |at: usize| Some(u16::from_be_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]));
    let take = |at: usize, n: usize| bytes.get(at..at + n);
    match i32::from(family) {
        libc::AF_INET => {
            let port = be16(2)?;
            let ip: [u8; 4] = take(4, 4)?.try_into().ok()?;
            Some(Target::Inet(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(ip),
                port,
            ))))
        }
        libc::AF_INET6 => {
            let port = be16(2)?;
            let ip: [u8; 16] = take(8, 16)?.try_into().ok()?;
            let scope = take(24, 4)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u32::from_ne_bytes);
            Some(Target::Inet(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(ip),
                port,
                0,
                scope,
            ))))
        }
        libc::AF_UNIX => Some(Target::Unix),
        libc::AF_NETLINK => Some(Target::Netlink),
        libc::AF_UNSPEC => Some(Target::Unspec),
        _ => Some(Target::Other(family)),
    }
}

/// Where the host connects, for a forwarded connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// This address.
    Addr(SocketAddr),
    /// This granted name (resolved by the host), at this port.
    Name {
        /// The name.
        host: String,
        /// The port.
        port: u16,
    },
}

impl std::fmt::Display for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Route::Addr(a) => write!(f, "{a}"),
            Route::Name { host, port } => write!(f, "{host}:{port}"),
        }
    }
}

/// The decision on one connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Let the kernel make it in the cage (its own loopback, unix and
    /// netlink sockets: nothing of the host is there).
    InCage,
    /// The host connects there and hands the socket over.
    Forward(Route),
    /// Refused (`ECONNREFUSED`), and why.
    Refuse(String),
}

/// The grants and stand-ins of a filtered cage, ready to decide.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetRules {
    grants: Vec<NetGrant>,
    stand_ins: Vec<StandIn>,
}

/// An IPv4 address in IPv6 form (`::ffff:a.b.c.d`) as its IPv4 form.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Link-local: 169.254.0.0/16, fe80::/10 (in any form).
pub fn is_link_local(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

/// The cage's own loopback: 127.0.0.0/8, ::1, and the unspecified
/// address (which `connect` takes for the local host).
fn is_cage_local(ip: IpAddr) -> bool {
    let ip = canonical(ip);
    ip.is_loopback() || ip.is_unspecified()
}

/// Whether an address a granted name resolved to (in the host) may be
/// connected to: `Err(why)` for a link-local, loopback or unspecified
/// one (reached only by a grant that names that address, or `localhost`).
pub fn resolved_ok(ip: IpAddr) -> Result<(), &'static str> {
    if is_link_local(ip) {
        Err("it resolves to a link-local address")
    } else if is_cage_local(ip) {
        Err("it resolves to a loopback or unspecified address")
    } else {
        Ok(())
    }
}

impl NetRules {
    /// The rules of `net` (its grants parsed, its stand-ins).
    pub fn from_policy(net: &NetPolicy) -> NetRules {
        NetRules::new(
            net.grants
                .iter()
                .filter_map(|g| NetGrant::parse(g))
                .collect(),
            net.stand_ins.clone(),
        )
    }

    /// The rules of `grants` with `stand_ins`.
    pub fn new(grants: Vec<NetGrant>, stand_ins: Vec<StandIn>) -> NetRules {
        NetRules { grants, stand_ins }
    }

    /// The name `ip` stands in for, if it is a stand-in.
    pub fn stand_in_for(&self, ip: IpAddr) -> Option<&str> {
        let IpAddr::V4(v4) = canonical(ip) else {
            return None;
        };
        self.stand_ins
            .iter()
            .find(|s| s.address == v4)
            .map(|s| s.host.as_str())
    }

    /// Decide a connect to `target` on a socket that is a stream (`TCP`)
    /// or not.
    pub fn decide(&self, target: &Target, stream: bool) -> Decision {
        let addr = match target {
            Target::Inet(addr) => *addr,
            Target::Unix | Target::Netlink | Target::Unspec => return Decision::InCage,
            Target::Other(f) => return Decision::Refuse(format!("address family {f}")),
        };
        let (ip, port) = (canonical(addr.ip()), addr.port());
        let addr = SocketAddr::new(ip, port);
        let route = if let Some(name) = self.stand_in_for(ip) {
            let granted = self
                .grants
                .iter()
                .any(|g| matches!(&g.host, NetHost::Name(n) if n == name) && g.allows_port(port));
            if !granted {
                return Decision::Refuse(format!("{name}:{port} is not granted"));
            }
            Route::Name {
                host: name.to_string(),
                port,
            }
        } else {
            let named = |g: &NetGrant| match &g.host {
                NetHost::Ip(granted) => canonical(*granted) == ip,
                host => {
                    host.is_localhost()
                        && (ip == IpAddr::V4(Ipv4Addr::LOCALHOST)
                            || ip == IpAddr::V6(Ipv6Addr::LOCALHOST))
                }
            };
            if !self.grants.iter().any(|g| named(g) && g.allows_port(port)) {
                return if is_cage_local(ip) {
                    Decision::InCage
                } else if is_link_local(ip) {
                    Decision::Refuse(format!("{addr} is link-local and not granted"))
                } else {
                    Decision::Refuse(format!("{addr} is not granted"))
                };
            }
            Route::Addr(addr)
        };
        if !stream {
            return Decision::Refuse(format!(
                "{route}: only TCP is forwarded (a datagram socket is not)"
            ));
        }
        Decision::Forward(route)
    }
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
