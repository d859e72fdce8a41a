//! `net:` grants are enforced (ADDENDUM §16, issue 45 item 4;
//! `kaged-host-sim/core/src/cage/net_filter/`): with `net:HOST:PORT` or
//! `net:HOST:*` the cage has its own network namespace and the host makes
//! the granted connects. The test runs its own echo servers on the host's
//! loopback and its own abstract unix socket, and closes them; the plugin
//! only connects (and resolves, and sends one UDP datagram that nothing
//! receives).

use std::io::ErrorKind;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use kaged_host_core::{CageMode, PluginHandle};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::hostile::{caged_here, host_in, probe};
use crate::race::{hostile_with, temp_base};

/// A line echo server on `addr` (port 0: any): its port and how many
/// connections it accepted. It lives as long as the test's runtime.
async fn echo_server(addr: &str) -> Option<(u16, Arc<AtomicUsize>)> {
    let listener = tokio::net::TcpListener::bind(addr).await.ok()?;
    let port = listener.local_addr().ok()?.port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&count);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let (r, mut w) = stream.into_split();
                let mut line = String::new();
                if BufReader::new(r).read_line(&mut line).await.is_ok() {
                    let _ = w.write_all(line.as_bytes()).await;
                }
            });
        }
    });
    Some((port, count))
}

/// The host's abstract unix socket the plugin must not reach.
fn abstract_listener(tag: &str) -> (String, UnixListener) {
    let name = format!("kaged-net-test-{tag}-{}", std::process::id());
    let l =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).expect("name"))
            .expect("abstract listener");
    l.set_nonblocking(true).expect("nonblocking");
    (name, l)
}

async fn launch(caps: &[&str]) -> (tempfile::TempDir, PluginHandle) {
    let (tmp, base) = temp_base();
    let dir = hostile_with(&base, caps);
    let s = host_in(CageMode::Require, None)
        .launch(&dir)
        .await
        .expect("launch caged");
    (tmp, s)
}

fn echo(host: &str, port: u16, blocking: bool) -> Value {
    json!({"name": "tcp_echo", "host": host, "port": port, "blocking": blocking})
}

fn connect(host: &str, port: u16) -> Value {
    json!({"name": "tcp_connect", "host": host, "port": port})
}

#[tokio::test]
async fn a_port_grant_reaches_that_host_and_port_only() {
    if !caged_here().await {
        return;
    }
    let (port, accepted) = echo_server("127.0.0.1:0").await.expect("echo server");
    let other = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    other.set_nonblocking(true).expect("nonblocking");
    let other_port = other.local_addr().expect("addr").port();
    // The same port on the IPv6 loopback, where the host has one.
    let v6 = std::net::TcpListener::bind(("::1", port)).ok();
    let (name, abstract_socket) = abstract_listener("port");
    let (_tmp, s) = launch(&[&format!("net:127.0.0.1:{port}")]).await;
    let line = s
        .cage()
        .and_then(|c| c.summary.as_ref())
        .map(|c| c.line())
        .unwrap_or_default();
    assert!(line.contains("network filtered (127.0.0.1:"), "{line}");
    // Neither the hosts file's descriptor nor the filter's reaches the plugin.
    let r = probe(&s, json!({"name": "fds"})).await;
    assert_eq!(r["open"], json!([]), "{r}");
    for blocking in [false, true] {
        let r = probe(&s, echo("127.0.0.1", port, blocking)).await;
        assert_eq!(r["ok"], true, "the granted port (blocking {blocking}): {r}");
        assert_eq!(r["echo"], "kaged-echo\n", "{r}");
        assert_eq!(r["peer"], json!(["127.0.0.1", port]), "{r}");
    }
    // The socket handed over stays a connection to the granted peer; the
    // cage's own sockets may still listen on its own loopback. (Python
    // names errno 95, EOPNOTSUPP on Linux, ENOTSUP.)
    let r = probe(
        &s,
        json!({"name": "handed_over", "host": "127.0.0.1", "port": port}),
    )
    .await;
    assert_eq!(r["listen"], "ENOTSUP", "{r}");
    assert_eq!(r["unspec"], "ENOTSUP", "{r}");
    assert_eq!(r["fastopen"], "ENOTSUP", "{r}");
    assert_eq!(r["own_listen"], Value::Null, "{r}");
    let r = probe(&s, connect("127.0.0.1", other_port)).await;
    assert_eq!(r["ok"], false, "another host port: {r}");
    let r = probe(&s, connect("::1", port)).await;
    assert_eq!(r["ok"], false, "the granted port on ::1: {r}");
    let r = probe(&s, connect("169.254.169.254", 80)).await;
    assert_eq!(
        r["errno"], "ECONNREFUSED",
        "link-local, refused at once: {r}"
    );
    let r = probe(&s, connect("::ffff:169.254.169.254", 80)).await;
    assert_eq!(r["errno"], "ECONNREFUSED", "link-local, IPv6 form: {r}");
    let r = probe(&s, json!({"name": "abstract_connect", "socket": name})).await;
    assert_eq!(
        r["errno"], "ECONNREFUSED",
        "the host's abstract socket: {r}"
    );
    for (host, p) in [("127.0.0.1", port), ("192.0.2.1", 53)] {
        let r = probe(&s, json!({"name": "udp_connect", "host": host, "port": p})).await;
        assert_eq!(r["errno"], "ECONNREFUSED", "UDP to {host}:{p}: {r}");
    }
    s.shutdown().await;
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        3,
        "the two echo connections and the handed-over one"
    );
    assert_eq!(
        other.accept().map(|_| ()).map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock)
    );
    if let Some(v6) = v6 {
        v6.set_nonblocking(true).expect("nonblocking");
        assert_eq!(
            v6.accept().map(|_| ()).map_err(|e| e.kind()),
            Err(ErrorKind::WouldBlock)
        );
    }
    assert_eq!(
        abstract_socket.accept().map(|_| ()).map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock)
    );
}

#[tokio::test]
async fn a_localhost_grant_of_any_port_reaches_every_port_of_the_host_loopback_only() {
    if !caged_here().await {
        return;
    }
    let (a, seen_a) = echo_server("127.0.0.1:0").await.expect("echo server");
    let (b, seen_b) = echo_server("127.0.0.1:0").await.expect("echo server");
    let (_tmp, s) = launch(&["net:localhost:*"]).await;
    let r = probe(&s, json!({"name": "resolve", "host": "localhost"})).await;
    assert!(
        r["addresses"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("127.0.0.1"))),
        "localhost in the cage's hosts file: {r}"
    );
    for port in [a, b] {
        let r = probe(&s, echo("localhost", port, false)).await;
        assert_eq!(r["echo"], "kaged-echo\n", "localhost:{port}: {r}");
    }
    for (host, port) in [("169.254.169.254", 80), ("192.0.2.1", a)] {
        let r = probe(&s, connect(host, port)).await;
        assert_eq!(r["errno"], "ECONNREFUSED", "{host}:{port}: {r}");
    }
    s.shutdown().await;
    assert_eq!(seen_a.load(Ordering::SeqCst), 1);
    assert_eq!(seen_b.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_granted_name_resolves_to_its_stand_in_and_nothing_else_resolves() {
    if !caged_here().await {
        return;
    }
    let (_tmp, s) = launch(&["net:api.kaged-test.invalid:443", "net:localhost:9"]).await;
    let stand_ins = &s
        .cage()
        .and_then(|c| c.policy.as_ref())
        .map(|p| p.net.stand_ins.clone())
        .unwrap_or_default();
    assert_eq!(stand_ins.len(), 1, "{stand_ins:?}");
    let r = probe(
        &s,
        json!({"name": "resolve", "host": "api.kaged-test.invalid"}),
    )
    .await;
    assert_eq!(r["addresses"], json!(["198.18.0.1"]), "{r}");
    // No DNS in the cage: a name without a grant does not resolve.
    let r = probe(&s, json!({"name": "resolve", "host": "example.com"})).await;
    assert_eq!(r["ok"], false, "{r}");
    // The stand-in's other ports are refused at once.
    let r = probe(&s, connect("198.18.0.1", 80)).await;
    assert_eq!(r["errno"], "ECONNREFUSED", "{r}");
    s.shutdown().await;
}

#[tokio::test]
async fn net_all_shares_the_host_network() {
    if !caged_here().await {
        return;
    }
    let (port, accepted) = echo_server("127.0.0.1:0").await.expect("echo server");
    let (_tmp, s) = launch(&["net:*"]).await;
    let line = s
        .cage()
        .and_then(|c| c.summary.as_ref())
        .map(|c| c.line())
        .unwrap_or_default();
    assert!(line.contains("network shared (*)"), "{line}");
    let r = probe(&s, echo("127.0.0.1", port, true)).await;
    assert_eq!(r["echo"], "kaged-echo\n", "{r}");
    s.shutdown().await;
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}
