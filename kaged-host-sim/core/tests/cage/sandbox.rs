//! The spec's Sandbox tests (plugin-host.md § Sandbox tests) and ADDENDUM
//! §13's, with a real bwrap and the `cage-probe` fixture plugin (stdlib
//! Python) staged with the capabilities under test. Every launch uses
//! [`CageMode::Require`]: a plugin that cannot be caged does not start, so
//! these tests can never pass uncaged. Without a working bwrap they fail
//! under `CI=true` and otherwise skip, saying why on stderr.

use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;

use kaged_host_core::cage::CageError;
use kaged_host_core::probe::outer_pid;
use kaged_host_core::{
    AuditLog, CageKind, CageMode, HostConfig, HostSim, LaunchError, PluginHandle, SpawnError,
    TimeScale,
};
use serde_json::{json, Value};

use crate::support::host::{fixture, process_exists, EASY};

/// Whether bwrap cages here (a panic under `CI=true` when it cannot).
async fn bwrap_works() -> bool {
    kaged_host_core::testing::cage_available_for("sandbox test").await
}

/// A copy of `cage-probe` with `capabilities`, in a temporary directory
/// that also holds what the test grants (`root/...`).
struct Probe {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Probe {
    fn new(capabilities: &[String]) -> Probe {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(tmp.path()).expect("canonical");
        let dir = root.join("plugin");
        std::fs::create_dir(&dir).expect("mkdir");
        let src = fixture("cage-probe");
        for f in ["plugin.py", "kproto.py"] {
            std::fs::copy(src.join(f), dir.join(f)).expect("copy");
        }
        let manifest = std::fs::read_to_string(src.join("kaged-plugin.yaml")).expect("read");
        assert!(manifest.contains("capabilities: []"));
        let manifest = manifest.replace(
            "capabilities: []",
            &format!("capabilities: {}", json!(capabilities)),
        );
        std::fs::write(dir.join("kaged-plugin.yaml"), manifest).expect("write");
        Probe { _tmp: tmp, root }
    }

    fn dir(&self) -> PathBuf {
        self.root.join("plugin")
    }
}

fn host(no_sandbox: bool) -> (HostSim, AuditLog) {
    let audit = AuditLog::memory();
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(EASY).expect("scale"))
            .with_audit(audit.clone())
            .with_cage(CageMode::Require)
            .with_no_sandbox(no_sandbox),
    );
    (host, audit)
}

async fn launch(probe: &Probe) -> PluginHandle {
    let (host, _audit) = host(false);
    let s = host.launch(&probe.dir()).await.expect("launch caged");
    assert!(s.caged(), "{:?}", s.cage());
    s
}

async fn ask(s: &PluginHandle, method: &str, params: Value) -> Value {
    s.call(method, Some(params), None)
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}"))
}

#[tokio::test]
async fn reading_etc_passwd_with_only_a_read_grant_of_opt_fails_inside_the_cage() {
    if !bwrap_works().await {
        return;
    }
    let p = Probe::new(&["read:fs:/opt/foo".to_string()]);
    let s = launch(&p).await;
    let r = ask(&s, "fs.read", json!({"path": "/etc/passwd"})).await;
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(r["errno"], "ENOENT", "{r}");
    // The host has it: the cage, not the machine, hides it.
    assert!(std::fs::metadata("/etc/passwd").is_ok());
    s.shutdown().await;
}

#[tokio::test]
async fn a_read_grant_shows_its_path_read_only() {
    if !bwrap_works().await {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = std::fs::canonicalize(tmp.path()).expect("canonical");
    std::fs::write(data.join("notes.txt"), "granted\n").expect("write");
    let p = Probe::new(&[format!("read:fs:{}", data.display())]);
    let s = launch(&p).await;
    let file = data.join("notes.txt").display().to_string();
    let r = ask(&s, "fs.read", json!({"path": file})).await;
    assert_eq!(r, json!({"ok": true, "bytes": 8}));
    let r = ask(&s, "fs.write", json!({"path": file})).await;
    assert_eq!(r["errno"], "EROFS", "{r}");
    assert_eq!(
        std::fs::read_to_string(data.join("notes.txt")).unwrap(),
        "granted\n"
    );
    s.shutdown().await;
}

/// A listener of the test, outside the cage, on the host's loopback.
fn listener() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    (l, port)
}

#[tokio::test]
async fn under_net_none_a_host_loopback_listener_cannot_be_reached() {
    if !bwrap_works().await {
        return;
    }
    let (_l, port) = listener();
    let p = Probe::new(&["net:[]".to_string()]);
    let s = launch(&p).await;
    let r = ask(
        &s,
        "net.connect",
        json!({"host": "127.0.0.1", "port": port}),
    )
    .await;
    assert_eq!(r["ok"], false, "{r}");
    // The cage's own loopback has no listener on that port.
    assert_eq!(r["errno"], "ECONNREFUSED", "{r}");
    s.shutdown().await;
}

#[tokio::test]
async fn with_a_net_grant_the_host_loopback_listener_is_reached() {
    if !bwrap_works().await {
        return;
    }
    let (l, port) = listener();
    let p = Probe::new(&["net:localhost:*".to_string()]);
    let s = launch(&p).await;
    let accept = std::thread::spawn(move || {
        let (mut c, _) = l.accept().expect("accept");
        let mut text = String::new();
        c.read_to_string(&mut text).expect("read");
        text
    });
    let r = ask(
        &s,
        "net.connect",
        json!({"host": "127.0.0.1", "port": port}),
    )
    .await;
    assert_eq!(r, json!({"ok": true}));
    assert_eq!(accept.join().expect("accepted"), "hello from the cage\n");
    s.shutdown().await;
}

#[tokio::test]
async fn with_no_sandbox_the_plugin_is_still_caged_and_it_is_audited() {
    if !bwrap_works().await {
        return;
    }
    let p = Probe::new(&["read:fs:/opt/foo".to_string()]);
    let (host, audit) = host(true);
    let s = host.launch(&p.dir()).await.expect("launch");
    assert!(s.caged());
    let spawned = audit.of(kaged_host_core::AuditEvent::Spawned);
    assert_eq!(spawned[0].get("cage"), "bwrap");
    let ignored = audit.of(kaged_host_core::AuditEvent::NoSandboxIgnored);
    assert_eq!(ignored.len(), 1);
    assert_eq!(ignored[0].get("cage"), "bwrap");
    assert_eq!(ignored[0].get("cage_id"), spawned[0].get("cage_id"));
    let r = ask(&s, "fs.read", json!({"path": "/etc/passwd"})).await;
    assert_eq!(r["errno"], "ENOENT", "{r}");
    s.shutdown().await;
}

#[tokio::test]
async fn writing_the_install_dir_or_home_fails_with_erofs() {
    if !bwrap_works().await {
        return;
    }
    let p = Probe::new(&[]);
    let s = launch(&p).await;
    let inside = p.dir().join("written.txt").display().to_string();
    let r = ask(&s, "fs.write", json!({"path": inside})).await;
    assert_eq!(r["errno"], "EROFS", "{r}");
    // HOME is the install dir; its .config too.
    let r = ask(
        &s,
        "fs.write",
        json!({"path": format!("{}/.bashrc", p.dir().display())}),
    )
    .await;
    assert_eq!(r["errno"], "EROFS", "{r}");
    assert!(!p.dir().join("written.txt").exists());
    s.shutdown().await;
}

#[tokio::test]
async fn a_write_grant_is_writable_and_seen_outside() {
    if !bwrap_works().await {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = std::fs::canonicalize(tmp.path()).expect("canonical");
    let p = Probe::new(&[format!("write:fs:{}", out.display())]);
    let s = launch(&p).await;
    let file = out.join("made.txt").display().to_string();
    let r = ask(
        &s,
        "fs.write",
        json!({"path": file, "text": "from the cage\n"}),
    )
    .await;
    assert_eq!(r, json!({"ok": true}));
    assert_eq!(
        std::fs::read_to_string(out.join("made.txt")).expect("written"),
        "from the cage\n"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn a_symlinked_grant_that_escapes_is_refused_at_start() {
    if !bwrap_works().await {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(tmp.path()).expect("canonical");
    std::os::unix::fs::symlink("/etc", root.join("link")).expect("symlink");
    let grant = format!("read:fs:{}/link", root.display());
    let p = Probe::new(std::slice::from_ref(&grant));
    let (host, audit) = host(false);
    let e = host.launch(&p.dir()).await.expect_err("refused");
    match &e {
        LaunchError::Spawn {
            source:
                SpawnError::Cage(CageError::Escapes {
                    capability,
                    resolved,
                    ..
                }),
            ..
        } => {
            assert_eq!(capability, &grant);
            assert_eq!(resolved, &PathBuf::from("/etc"));
        }
        other => panic!("expected an escaping grant, got {other:?}"),
    }
    let text = kaged_host_core::one_line("error", &e);
    assert!(
        text.contains(&grant) && text.contains("outside the declared path"),
        "{text}"
    );
    assert_eq!(audit.names(), ["plugin.failed"]);
}

#[tokio::test]
async fn a_setsid_grandchild_does_not_outlive_the_plugin() {
    if !bwrap_works().await {
        return;
    }
    let p = Probe::new(&[]);
    let s = launch(&p).await;
    let r = ask(&s, "proc.setsid_child", json!({})).await;
    let inner = r["pid"].as_u64().expect("pid") as u32;
    let pgid = s.pid().expect("pid");
    let outer = outer_pid(pgid, inner).expect("the grandchild, seen from the host");
    assert!(process_exists(outer));
    // It left the plugin's process group: a group kill would miss it.
    let st = kaged_host_core::probe::proc_state(outer).expect("state");
    assert_ne!(st.pgrp, pgid);
    assert!(s.shutdown().await.is_clean());
    assert!(
        !process_exists(outer),
        "the setsid grandchild outlived the cage"
    );
}

#[tokio::test]
async fn each_spawn_gets_its_own_cage_id() {
    if !bwrap_works().await {
        return;
    }
    let p = Probe::new(&[]);
    let (host, audit) = host(false);
    for _ in 0..2 {
        let s = host.launch(&p.dir()).await.expect("launch");
        let st = s.cage().expect("a process").clone();
        assert_eq!(st.cage, CageKind::Bwrap);
        assert!(st.summary.is_some());
        s.shutdown().await;
    }
    let ids: Vec<Value> = audit
        .of(kaged_host_core::AuditEvent::Spawned)
        .iter()
        .map(|r| r.get("cage_id").clone())
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(ids[0].is_string() && ids[0] != ids[1], "{ids:?}");
}
