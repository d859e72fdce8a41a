//! The Landlock layer (issue 45, ADDENDUM §16 "`net:` grants are
//! enforced"; `kaged-host-sim/core/src/cage/landlock_layer.rs`): with
//! `net:127.0.0.1:P` the plugin reaches port P and no other port (the
//! filtered network's own loopback refuses it with Landlock's `EACCES`,
//! `net.rs` checks the host's side), and with `net:*` (the host's network,
//! shared) no abstract unix socket of the host (Landlock's scope). The
//! test opens the listeners itself, on loopback, and closes them; the
//! plugin only connects.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};

use std::os::fd::AsRawFd;

use kaged_host_core::cage::{race_hook, LandlockSupport};
use kaged_host_core::CageMode;
use serde_json::json;

use crate::hostile::{caged_here, host_in, probe};
use crate::race::hostile_with;

/// Whether this kernel has what the test checks; under `CI=true` it must.
fn landlock_here() -> bool {
    let s = LandlockSupport::detect();
    if s.tcp && s.scopes {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI=true: this kernel's Landlock lacks TCP rules or scopes ({s:?})"
    );
    eprintln!("skipped: Landlock TCP rules and scopes are not available here ({s:?})");
    false
}

#[tokio::test]
async fn a_port_grant_reaches_that_port_only_and_no_host_abstract_socket() {
    if !caged_here().await || !landlock_here() {
        return;
    }
    let granted = TcpListener::bind("127.0.0.1:0").expect("listen");
    let other = TcpListener::bind("127.0.0.1:0").expect("listen");
    let (gp, op) = (
        granted.local_addr().expect("addr").port(),
        other.local_addr().expect("addr").port(),
    );
    let name = format!("kaged-landlock-test-{}", std::process::id());
    let abstract_listener =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).expect("name"))
            .expect("abstract listener");
    abstract_listener
        .set_nonblocking(true)
        .expect("nonblocking");
    let (_tmp, base) = crate::race::temp_base();
    let dir = hostile_with(&base, &[&format!("net:127.0.0.1:{gp}")]);
    let s = host_in(CageMode::Require, None)
        .launch(&dir)
        .await
        .expect("launch caged");
    let line = s
        .cage()
        .and_then(|c| c.summary.as_ref())
        .map(|c| c.line())
        .unwrap_or_default();
    assert!(
        line.contains(&format!("landlock fs; tcp {gp}; scoped")),
        "{line}"
    );
    let to = |port: u16| json!({"name": "tcp_connect", "host": "127.0.0.1", "port": port});
    let r = probe(&s, to(gp)).await;
    assert_eq!(r["ok"], true, "the granted port: {r}");
    let r = probe(&s, to(op)).await;
    assert_eq!(r["errno"], "EACCES", "another host port: {r}");
    let r = probe(&s, json!({"name": "abstract_connect", "socket": name})).await;
    assert_eq!(
        r["errno"], "ECONNREFUSED",
        "the host's abstract socket, not in the cage's network namespace: {r}"
    );
    s.shutdown().await;
    // Shared (net:*): Landlock's scope keeps the host's abstract sockets.
    let (_tmp_all, base_all) = crate::race::temp_base();
    let all = host_in(CageMode::Require, None)
        .launch(&hostile_with(&base_all, &["net:*"]))
        .await
        .expect("launch caged");
    let r = probe(&all, json!({"name": "abstract_connect", "socket": name})).await;
    assert_eq!(
        r["errno"], "EPERM",
        "the host's abstract socket, net:*: {r}"
    );
    all.shutdown().await;
    // Only the granted connection reached the host.
    granted.set_nonblocking(true).expect("nonblocking");
    other.set_nonblocking(true).expect("nonblocking");
    assert!(
        granted.accept().is_ok(),
        "the granted port saw its connection"
    );
    assert_eq!(
        other.accept().map(|_| ()).map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock)
    );
    assert_eq!(
        abstract_listener.accept().map(|_| ()).map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock)
    );
}

/// The Landlock ruleset's descriptor never collides with the descriptors
/// placed for bwrap (seen in the cage bench: another task closed a
/// descriptor while a cage was being made, the ruleset took that number,
/// a bind's slot, and placing the binds closed it: the start failed). The
/// test makes that hole itself, from the spawner's pause, just before the
/// ruleset is created.
#[tokio::test]
async fn the_landlock_ruleset_survives_the_placing_of_the_descriptors() {
    if !caged_here().await || !landlock_here() {
        return;
    }
    let (_tmp, base) = crate::race::temp_base();
    let dir = hostile_with(&base, &["net:127.0.0.1:9"]);
    let mut held: Vec<std::fs::File> = (0..64)
        .map(|_| std::fs::File::open("/dev/null").expect("a descriptor"))
        .collect();
    // The lowest one from the first bind's slot (5) on: a slot number.
    let at = held
        .iter()
        .position(|f| f.as_raw_fd() >= 5)
        .expect("a descriptor above 5");
    let victim = std::sync::Mutex::new(Some(held.remove(at)));
    let _hook = race_hook::before_bwrap(
        &dir,
        std::sync::Arc::new(move |_| {
            drop(victim.lock().expect("lock").take());
        }),
    );
    let s = host_in(CageMode::Require, None)
        .launch(&dir)
        .await
        .expect("the cage starts");
    s.shutdown().await;
    drop(held);
}

#[tokio::test]
async fn every_caged_plugin_runs_under_the_landlock_file_rules() {
    if !caged_here().await || !landlock_here() {
        return;
    }
    let s = crate::hostile::hostile().await;
    let line = s.cage().expect("a cage").line();
    assert!(line.contains("landlock fs; scoped"), "{line}");
    // The init is mounted (it ran the plugin) but is in no rule: readable
    // by its mode, refused by Landlock. Without the layer there is no
    // init (ENOENT), or it would be read.
    let init = kaged_host_core::cage::init::INIT_DEST;
    let r = probe(&s, json!({"name": "read", "path": init})).await;
    assert_eq!(r["errno"], "EACCES", "{r}");
    // What the rules allow still works: its own directory, /tmp.
    let r = probe(&s, json!({"name": "read", "path": "/etc/nsswitch.conf"})).await;
    assert_eq!(r["ok"], true, "{r}");
    let r = probe(
        &s,
        json!({"name": "create", "paths": ["/tmp/landlock-probe"]}),
    )
    .await;
    assert_eq!(r["ok"], true, "{r}");
    s.shutdown().await;
}
