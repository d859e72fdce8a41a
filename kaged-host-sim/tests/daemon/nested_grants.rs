//! ADDENDUM §16 under `up`: a plugin whose grant lies inside another
//! plugin's writable grant does not start (that one could swap a parent of
//! it while its cage is built); the others start.

use std::path::{Path, PathBuf};

use kaged_host_core::audit::{AuditEvent, AuditLog};
use kaged_host_core::{CageMode, HostConfig, HostSim, PluginState, TimeScale};
use kaged_host_sim::daemon::{Daemon, DaemonError};

use crate::support::host::{fixture, EASY, LIMIT};

/// A copy of the `good` fixture named `name` with the capabilities `caps`.
fn plugin(base: &Path, name: &str, caps: &[&str]) -> PathBuf {
    let src = fixture("good");
    let dir = base.join(name);
    std::fs::create_dir_all(&dir).expect("dir");
    for f in ["plugin.py", "kproto.py"] {
        std::fs::copy(src.join(f), dir.join(f)).expect("copy");
    }
    let text = std::fs::read_to_string(src.join("kaged-plugin.yaml")).expect("manifest");
    let list: String = caps.iter().map(|c| format!("  - \"{c}\"\n")).collect();
    let text = text
        .replace("name: good", &format!("name: {name}"))
        .replace(
            "capabilities: \n  - net: []\n  - kaged:storage:read\n",
            &format!("capabilities:\n  - net: []\n  - kaged:storage:read\n{list}"),
        );
    assert!(text.contains(caps[0]), "{text}");
    std::fs::write(dir.join("kaged-plugin.yaml"), text).expect("write");
    dir
}

#[tokio::test]
async fn a_grant_inside_another_plugins_writable_grant_does_not_start() {
    let caged = kaged_host_core::testing::cage_available_for("nested grants under up").await;
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(tmp.path()).expect("canonical");
    let dirs = vec![
        plugin(&base, "writer", &["write:fs:config:/shared"]),
        plugin(&base, "inner", &["read:fs:config:/shared/data"]),
        plugin(&base, "apart", &["write:fs:config:/shared-not"]),
    ];
    let audit = AuditLog::memory();
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(EASY).expect("scale"))
            .with_audit(audit.clone())
            .with_cage(if caged {
                CageMode::Require
            } else {
                CageMode::Off
            })
            .with_config_root(Some(base.join("config"))),
    );
    let daemon = Daemon::new(host, &dirs);
    daemon.start_all().await;
    let refused: Vec<_> = audit
        .of(AuditEvent::Failed)
        .into_iter()
        .filter(|r| r.get("reason") == "nested_grant")
        .collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0].plugin, "inner");
    let detail = refused[0]
        .get("detail")
        .as_str()
        .unwrap_or_default()
        .to_string();
    for part in [
        "read:fs:config:/shared/data",
        "writer",
        "write:fs:config:/shared",
    ] {
        assert!(detail.contains(part), "{detail}");
    }
    // The operator cannot enable or restart it either.
    for r in [daemon.enable("inner").await, daemon.restart("inner").await] {
        assert!(matches!(r, Err(DaemonError::NestedGrant { .. })), "{r:?}");
    }
    // `writer` and `apart` (a sibling, not nested) come up.
    for name in ["writer", "apart"] {
        let mut state = daemon.supervisor(name).expect(name).subscribe();
        let running = tokio::time::timeout(LIMIT, state.wait_for(|s| *s == PluginState::Running))
            .await
            .is_ok_and(|r| r.is_ok());
        assert!(
            running,
            "{name}: {:?}: {:?}",
            *state.borrow(),
            audit.names()
        );
    }
    assert_ne!(
        daemon.supervisor("inner").expect("inner").state(),
        PluginState::Running
    );
    daemon.shutdown().await;
}
