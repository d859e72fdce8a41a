//! The `net:` grants of a filtered cage, as data (ADDENDUM §16 "`net:`
//! grants are enforced"): each grant's host and port, the stand-in
//! address each granted host *name* gets, and the `/etc/hosts` the cage
//! sees.
//!
//! A filtered cage has its own, empty network namespace and no DNS: its
//! `/etc/hosts` is the resolver. Each granted name maps to a stand-in
//! address from 198.18.0.0/15 (RFC 2544's benchmarking range, which no
//! service uses), numbered from 198.18.0.1 in the order of the policy's
//! (sorted) grants; `localhost` maps to 127.0.0.1 and ::1 as usual, and a
//! grant of a literal address needs no entry. When the plugin connects to
//! a stand-in, the host resolves the name it stands for and connects
//! there (`super::net_filter`).

use std::net::{IpAddr, Ipv4Addr};

use serde::{Deserialize, Serialize};

/// The first address of the stand-in range (198.18.0.0/15); the stand-ins
/// are the addresses after it.
pub const STAND_IN_BASE: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 0);
/// How many stand-in addresses the range holds (a /15, less its first).
pub const STAND_IN_COUNT: u32 = (1 << 17) - 1;

/// The host of a `net:HOST:PORT` or `net:HOST:*` grant.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NetHost {
    /// A host name, lower-cased (`localhost` among them).
    Name(String),
    /// A literal address (`127.0.0.1`, `[::1]` without its brackets).
    Ip(IpAddr),
}

impl NetHost {
    /// `localhost` (any case).
    pub fn is_localhost(&self) -> bool {
        matches!(self, NetHost::Name(n) if n == "localhost")
    }
}

/// One `net:` grant (not `net:*`, not `net:[]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NetGrant {
    /// The host.
    pub host: NetHost,
    /// The port; `None` for `*`.
    pub port: Option<u16>,
}

impl NetGrant {
    /// A grant from the policy's form, `HOST:PORT` or `HOST:*` (an IPv6
    /// address in brackets); `None` for anything else (`*`).
    pub fn parse(target: &str) -> Option<NetGrant> {
        let (host, port) = target.rsplit_once(':')?;
        let port = match port {
            "*" => None,
            p => Some(p.parse::<u16>().ok()?),
        };
        if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            let ip = v6.parse::<std::net::Ipv6Addr>().ok()?;
            return Some(NetGrant {
                host: NetHost::Ip(IpAddr::V6(ip)),
                port,
            });
        }
        let bare = host;
        let host = match bare.parse::<IpAddr>() {
            Ok(ip) => NetHost::Ip(ip),
            Err(_) if !bare.is_empty() && !bare.contains(['[', ']', ':']) => {
                NetHost::Name(bare.to_ascii_lowercase())
            }
            Err(_) => return None,
        };
        Some(NetGrant { host, port })
    }

    /// Whether the grant allows `port`.
    pub fn allows_port(&self, port: u16) -> bool {
        self.port.is_none_or(|p| p == port)
    }
}

/// A granted host name and the address that stands for it in the cage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandIn {
    /// The granted name, lower-cased.
    pub host: String,
    /// Its address in the cage's `/etc/hosts`.
    pub address: Ipv4Addr,
}

/// The stand-in table of `grants`: each distinct name but `localhost`, in
/// order, gets the next address of the range (at most
/// [`STAND_IN_COUNT`]: the names after that get none, and are unreachable).
pub fn stand_ins(grants: &[NetGrant]) -> Vec<StandIn> {
    let mut out: Vec<StandIn> = Vec::new();
    for g in grants {
        let NetHost::Name(name) = &g.host else {
            continue;
        };
        if g.host.is_localhost() || out.iter().any(|s| &s.host == name) {
            continue;
        }
        let Ok(n) = u32::try_from(out.len() + 1) else {
            break;
        };
        if n > STAND_IN_COUNT {
            break;
        }
        out.push(StandIn {
            host: name.clone(),
            address: Ipv4Addr::from(u32::from(STAND_IN_BASE) + n),
        });
    }
    out
}

/// The cage's `/etc/hosts`: `localhost` and each stand-in.
pub fn hosts_file(stand_ins: &[StandIn]) -> String {
    let mut text = String::from(
        "# The cage's hosts (kaged): each granted host name at its stand-in address;\n\
         # the host connects to the real one. There is no DNS in this cage.\n\
         127.0.0.1\tlocalhost\n\
         ::1\tlocalhost ip6-localhost ip6-loopback\n",
    );
    for s in stand_ins {
        text.push_str(&format!("{}\t{}\n", s.address, s.host));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_parse_from_the_policy_form() {
        let g = NetGrant::parse("API.example.com:443").unwrap();
        assert_eq!(g.host, NetHost::Name("api.example.com".into()));
        assert_eq!(g.port, Some(443));
        let g = NetGrant::parse("[::1]:*").unwrap();
        assert_eq!(g.host, NetHost::Ip("::1".parse().unwrap()));
        assert!(g.allows_port(1) && g.allows_port(65535));
        let g = NetGrant::parse("127.0.0.1:5432").unwrap();
        assert_eq!(g.host, NetHost::Ip("127.0.0.1".parse().unwrap()));
        assert!(g.allows_port(5432) && !g.allows_port(5433));
        for bad in ["*", "host:", "host:x", ":80", "[nope]:80", "host:70000"] {
            assert_eq!(NetGrant::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn each_name_gets_the_next_stand_in_and_addresses_none() {
        let grants: Vec<NetGrant> = [
            "a.example:443",
            "127.0.0.1:80",
            "localhost:*",
            "b.example:*",
            "a.example:80",
        ]
        .iter()
        .filter_map(|g| NetGrant::parse(g))
        .collect();
        let table = stand_ins(&grants);
        assert_eq!(
            table,
            vec![
                StandIn {
                    host: "a.example".into(),
                    address: Ipv4Addr::new(198, 18, 0, 1)
                },
                StandIn {
                    host: "b.example".into(),
                    address: Ipv4Addr::new(198, 18, 0, 2)
                },
            ]
        );
        let hosts = hosts_file(&table);
        assert!(hosts.contains("127.0.0.1\tlocalhost\n"), "{hosts}");
        assert!(hosts.contains("198.18.0.2\tb.example\n"), "{hosts}");
    }
}
