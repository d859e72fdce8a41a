use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use proptest::prelude::*;

use super::*;
use crate::cage::net_grants::stand_ins;

fn rules(grants: &[&str]) -> NetRules {
    let grants: Vec<NetGrant> = grants.iter().filter_map(|g| NetGrant::parse(g)).collect();
    let table = stand_ins(&grants);
    NetRules::new(grants, table)
}

fn to(addr: &str) -> Target {
    Target::Inet(addr.parse::<SocketAddr>().unwrap())
}

fn refused(d: &Decision) -> bool {
    matches!(d, Decision::Refuse(_))
}

#[test]
fn a_literal_grant_reaches_that_address_and_port_only() {
    let r = rules(&["127.0.0.1:5432", "203.0.113.7:443"]);
    assert_eq!(
        r.decide(&to("127.0.0.1:5432"), true),
        Decision::Forward(Route::Addr("127.0.0.1:5432".parse().unwrap()))
    );
    assert_eq!(
        r.decide(&to("[::ffff:203.0.113.7]:443"), true),
        Decision::Forward(Route::Addr("203.0.113.7:443".parse().unwrap()))
    );
    // Another port of a granted loopback address: the cage's own loopback.
    assert_eq!(r.decide(&to("127.0.0.1:5433"), true), Decision::InCage);
    assert_eq!(r.decide(&to("[::1]:5432"), true), Decision::InCage);
    assert!(refused(&r.decide(&to("203.0.113.7:80"), true)));
    assert!(refused(&r.decide(&to("203.0.113.8:443"), true)));
    assert!(refused(&r.decide(&to("[2001:db8::1]:443"), true)));
}

#[test]
fn link_local_is_refused_unless_a_grant_names_it() {
    let r = rules(&["localhost:*", "a.example:*"]);
    for a in [
        "169.254.169.254:80",
        "[::ffff:169.254.169.254]:80",
        "[fe80::1]:80",
        "[febf::1]:80",
    ] {
        let d = r.decide(&to(a), true);
        assert!(
            matches!(&d, Decision::Refuse(w) if w.contains("link-local")),
            "{a}: {d:?}"
        );
    }
    let r = rules(&["169.254.169.254:80"]);
    assert!(matches!(
        r.decide(&to("[::ffff:169.254.169.254]:80"), true),
        Decision::Forward(_)
    ));
    assert!(refused(&r.decide(&to("169.254.169.254:81"), true)));
}

#[test]
fn a_stand_in_is_its_granted_name() {
    let r = rules(&["a.example:443", "b.example:*"]);
    assert_eq!(
        r.stand_in_for("198.18.0.1".parse().unwrap()),
        Some("a.example")
    );
    assert_eq!(
        r.decide(&to("198.18.0.1:443"), true),
        Decision::Forward(Route::Name {
            host: "a.example".into(),
            port: 443
        })
    );
    assert_eq!(
        r.decide(&to("[::ffff:198.18.0.1]:443"), true),
        Decision::Forward(Route::Name {
            host: "a.example".into(),
            port: 443
        })
    );
    assert!(refused(&r.decide(&to("198.18.0.1:80"), true)));
    for port in [1, 80, 443, 65535] {
        assert_eq!(
            r.decide(&to(&format!("198.18.0.2:{port}")), true),
            Decision::Forward(Route::Name {
                host: "b.example".into(),
                port
            })
        );
    }
    // Not a stand-in of this cage.
    assert!(refused(&r.decide(&to("198.18.0.3:443"), true)));
}

#[test]
fn localhost_is_127_0_0_1_and_the_ipv6_loopback() {
    let r = rules(&["localhost:8080"]);
    for a in ["127.0.0.1:8080", "[::1]:8080", "[::ffff:127.0.0.1]:8080"] {
        assert!(
            matches!(r.decide(&to(a), true), Decision::Forward(_)),
            "{a}"
        );
    }
    assert_eq!(r.decide(&to("127.0.0.2:8080"), true), Decision::InCage);
    assert_eq!(r.decide(&to("127.0.0.1:8081"), true), Decision::InCage);
}

#[test]
fn datagrams_are_never_forwarded_and_other_families_are_refused() {
    let r = rules(&["127.0.0.1:53", "a.example:53"]);
    assert!(refused(&r.decide(&to("127.0.0.1:53"), false)));
    assert!(refused(&r.decide(&to("198.18.0.1:53"), false)));
    assert!(refused(&r.decide(&to("192.0.2.1:53"), false)));
    assert_eq!(r.decide(&to("127.0.0.1:54"), false), Decision::InCage);
    for t in [Target::Unix, Target::Netlink, Target::Unspec] {
        assert_eq!(r.decide(&t, true), Decision::InCage);
    }
    assert!(refused(&r.decide(&Target::Other(40), true)));
}

#[test]
fn what_a_name_resolves_to_in_the_host() {
    for bad in [
        "169.254.1.1",
        "fe80::2",
        "127.0.0.1",
        "::1",
        "0.0.0.0",
        "::ffff:169.254.0.1",
    ] {
        assert!(resolved_ok(bad.parse().unwrap()).is_err(), "{bad}");
    }
    for good in ["203.0.113.1", "2001:db8::1", "198.18.0.1"] {
        assert!(resolved_ok(good.parse().unwrap()).is_ok(), "{good}");
    }
}

#[test]
fn sockaddrs_parse_as_the_kernel_lays_them_out() {
    let mut v4 = vec![0u8; 16];
    v4[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
    v4[2..4].copy_from_slice(&443u16.to_be_bytes());
    v4[4..8].copy_from_slice(&[169, 254, 169, 254]);
    assert_eq!(parse_sockaddr(&v4), Some(to("169.254.169.254:443")));
    assert_eq!(parse_sockaddr(&v4[..6]), None);
    let mut v6 = vec![0u8; 28];
    v6[..2].copy_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
    v6[2..4].copy_from_slice(&80u16.to_be_bytes());
    v6[8..24].copy_from_slice(&Ipv6Addr::LOCALHOST.octets());
    assert_eq!(parse_sockaddr(&v6), Some(to("[::1]:80")));
    let unix = (libc::AF_UNIX as u16).to_ne_bytes();
    assert_eq!(parse_sockaddr(&unix), Some(Target::Unix));
    assert_eq!(parse_sockaddr(&[1]), None);
}

proptest! {
    /// Every IPv4 address decides the same in its IPv6-mapped form.
    #[test]
    fn mapped_addresses_decide_as_their_ipv4_form(ip in any::<u32>(), port in any::<u16>()) {
        let r = rules(&["a.example:443", "127.0.0.1:5432", "169.254.169.254:80", "10.1.2.3:*"]);
        let v4 = Ipv4Addr::from(ip);
        let plain = Target::Inet(SocketAddr::new(IpAddr::V4(v4), port));
        let mapped = Target::Inet(SocketAddr::new(IpAddr::V6(v4.to_ipv6_mapped()), port));
        prop_assert_eq!(r.decide(&plain, true), r.decide(&mapped, true));
        prop_assert_eq!(r.decide(&plain, false), r.decide(&mapped, false));
    }

    /// A link-local address is never forwarded unless granted by address.
    #[test]
    fn link_local_is_never_forwarded(low in any::<u16>(), port in any::<u16>(), v6 in any::<[u16; 7]>()) {
        let r = rules(&["localhost:*", "a.example:*", "10.0.0.1:*", "[2001:db8::1]:*"]);
        let [a, b] = low.to_be_bytes();
        let v4 = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(169, 254, a, b)), port);
        prop_assert!(refused(&r.decide(&Target::Inet(v4), true)));
        let s = Ipv6Addr::new(0xfe80 | (v6[0] & 0x3f), v6[1], v6[2], v6[3], v6[4], v6[5], v6[6], low);
        let v6 = SocketAddr::new(IpAddr::V6(s), port);
        prop_assert!(refused(&r.decide(&Target::Inet(v6), true)));
    }

    /// A port grant forwards that port only; `*` forwards every port.
    #[test]
    fn ports(port in any::<u16>(), granted in any::<u16>()) {
        let r = rules(&[&format!("192.0.2.1:{granted}"), "192.0.2.2:*"]);
        let one = r.decide(&to(&format!("192.0.2.1:{port}")), true);
        prop_assert_eq!(matches!(one, Decision::Forward(_)), port == granted);
        let any = r.decide(&to(&format!("192.0.2.2:{port}")), true);
        prop_assert!(matches!(any, Decision::Forward(_)));
    }
}
