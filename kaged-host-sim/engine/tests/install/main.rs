//! The install flow (plugin-host.md § Install flow and the Testing notes'
//! "Install tests"): manual install, invalid-manifest refusal, upgrade
//! with a capability diff and the running plugin restarted on the new copy,
//! uninstall refused with active sessions unless
//! forced, and cleanup of the plugin's storage on uninstall; what install
//! copies is in [`copies`]; consent recorded and checked at every start in
//! [`consent`].

#[path = "../../../tests/support/mod.rs"]
mod support;

mod consent;

use std::path::Path;

use kaged_host_core::{AuditLog, HostConfig, HostSim, TimeScale};
use kaged_host_engine::{InstallError, PluginStore};
use kaged_host_storage::StorageBroker;
use kaged_host_storage::StorageClient;
use kaged_plugin_protocol::StorageMethod;
use serde_json::json;
use support::host::*;

fn manifest(dir: &Path, version: &str, capabilities: &[&str]) {
    let caps: Vec<String> = capabilities
        .iter()
        .map(|c| format!("  - \"{c}\"\n"))
        .collect();
    let text = format!(
        "name: oh-my-pi\nversion: {version}\nkaged_api: 1\ndescription: Preset catalogue.\ncommand: [./run.sh]\ncapabilities:\n{}",
        caps.concat()
    );
    std::fs::write(dir.join("kaged-plugin.yaml"), text).expect("write manifest");
    std::fs::write(dir.join("run.sh"), format!("#!/bin/sh\necho {version}\n"))
        .expect("write script");
}

fn store() -> (tempfile::TempDir, PluginStore, AuditLog) {
    let root = tempfile::tempdir().expect("tempdir");
    let audit = AuditLog::memory();
    let store = PluginStore::open(root.path(), audit.clone()).expect("open store");
    (root, store, audit)
}

#[tokio::test]
async fn manual_install_happy_path_records_the_entry_and_the_copy_runs() {
    let (_root, store, audit) = store();
    let src = fixture("shell-adapter");
    let mut shown = String::new();
    let entry = store
        .install(&src, |plan| {
            shown = plan.render();
            assert_eq!(plan.question(), "Install my-simple-adapter?");
            true
        })
        .expect("install");
    for line in [
        "name: my-simple-adapter",
        "version: 0.1.0",
        "kaged_api: 1",
        "- net:[]",
    ] {
        assert!(
            shown.contains(line),
            "{line} missing from the prompt:\n{shown}"
        );
    }
    assert_eq!(
        (entry.installed.as_str(), entry.local, entry.enabled),
        ("0.1.0", true, false),
        "installed locally and disabled until enabled"
    );
    assert_eq!(store.list().expect("list"), vec![entry]);
    let installed = one(&audit, "plugin.installed");
    assert_eq!(installed.get("version"), &json!("0.1.0"));
    assert_eq!(installed.get("local"), &json!(true));
    assert_eq!(installed.get("source"), &json!(src.display().to_string()));

    // The installed copy is a working plugin on its own.
    let dir = store.plugin_dir("my-simple-adapter");
    assert!(dir.join("plugin.sh").is_file());
    let (host, _, _) = host(EASY);
    let plugin = host.launch(&dir).await.expect("launch the installed copy");
    plugin.ping().await.expect("ping");
    let pid = plugin.pid().expect("pid");
    plugin.shutdown().await;
    assert_group_gone(pid);
}

#[test]
fn an_invalid_or_missing_manifest_is_refused_and_nothing_is_installed() {
    let (_root, store, audit) = store();
    let src = tempfile::tempdir().expect("tempdir");
    let e = store
        .install(src.path(), |_| true)
        .expect_err("no manifest");
    assert!(matches!(e, InstallError::NoManifest { .. }), "{e}");

    std::fs::write(
        src.path().join("kaged-plugin.yaml"),
        "version: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [x]\ncapabilities: []\n",
    )
    .expect("write");
    let mut asked = false;
    let e = store
        .install(src.path(), |_| {
            asked = true;
            true
        })
        .expect_err("missing name");
    assert!(
        !asked,
        "the operator is not asked about an invalid manifest"
    );
    match &e {
        InstallError::InvalidManifest { report, .. } => {
            assert!(report.contains("name"), "{report}")
        }
        other => panic!("expected InvalidManifest, got {other}"),
    }
    assert!(store.list().expect("list").is_empty());
    assert!(audit.names().is_empty(), "{:?}", audit.names());
}

#[test]
fn an_upgrade_shows_the_capability_diff_and_needs_consent() {
    let (_root, store, audit) = store();
    let v1 = tempfile::tempdir().expect("tempdir");
    manifest(
        v1.path(),
        "1.4.2",
        &["read:fs:/opt/oh-my-pi", "exec:bash:/opt/oh-my-pi", "net:[]"],
    );
    store.install(v1.path(), |_| true).expect("install 1.4.2");
    store.set_enabled("oh-my-pi", true).expect("enable");

    let again = store
        .install(v1.path(), |_| true)
        .expect_err("same version");
    assert!(
        matches!(again, InstallError::AlreadyInstalled { .. }),
        "{again}"
    );

    let v2 = tempfile::tempdir().expect("tempdir");
    manifest(
        v2.path(),
        "2.0.0",
        &["read:fs:/opt/oh-my-pi", "net:api.openai.com:443"],
    );
    let plan = store.plan(v2.path()).expect("plan");
    let upgrade = plan.upgrade.clone().expect("an upgrade");
    assert_eq!(upgrade.old_version, "1.4.2");
    assert_eq!(upgrade.added, ["net:api.openai.com:443"]);
    assert_eq!(upgrade.removed, ["exec:bash:/opt/oh-my-pi", "net:[]"]);
    let prompt = plan.render();
    assert!(
        prompt.contains("+ net:api.openai.com:443    (NEW)"),
        "{prompt}"
    );
    assert!(
        prompt.contains("- exec:bash:/opt/oh-my-pi    (REMOVED)"),
        "{prompt}"
    );
    assert_eq!(plan.question(), "Upgrade oh-my-pi 1.4.2 → 2.0.0?");

    let declined = store.install(v2.path(), |_| false).expect_err("declined");
    assert!(
        matches!(declined, InstallError::Declined { .. }),
        "{declined}"
    );
    assert_eq!(store.list().expect("list")[0].installed, "1.4.2");
    let script = store.plugin_dir("oh-my-pi").join("run.sh");
    assert!(std::fs::read_to_string(&script)
        .expect("script")
        .contains("1.4.2"));

    let upgraded = store.install(v2.path(), |_| true).expect("upgrade");
    assert_eq!(upgraded.installed, "2.0.0");
    assert!(upgraded.enabled, "an upgrade keeps the enabled state");
    assert!(std::fs::read_to_string(&script)
        .expect("script")
        .contains("2.0.0"));
    let event = one(&audit, "plugin.upgraded");
    assert_eq!(event.get("old_version"), &json!("1.4.2"));
    assert_eq!(event.get("new_version"), &json!("2.0.0"));
    assert_eq!(
        event.get("capability_diff"),
        &json!({"added": ["net:api.openai.com:443"], "removed": ["exec:bash:/opt/oh-my-pi", "net:[]"]})
    );
}

#[tokio::test]
async fn uninstall_with_active_sessions_is_refused_without_force_and_drops_storage_with_it() {
    let (_root, store, audit) = store();
    let src = tempfile::tempdir().expect("tempdir");
    manifest(src.path(), "1.0.0", &["kaged:storage:write"]);
    store.install(src.path(), |_| true).expect("install");
    let broker = StorageBroker::open_temp().expect("broker");
    let exec = |plugin: &str, sql: &str| {
        broker
            .handle(
                &StorageClient::new(plugin, true, true),
                StorageMethod::Exec,
                Some(json!({"sql": sql, "params": []})),
            )
            .expect(sql);
    };
    exec("oh-my-pi", "CREATE TABLE presets (id TEXT)");
    exec("other", "CREATE TABLE presets (id TEXT)");

    let e = store
        .uninstall("oh-my-pi", 1, false, &[], Some(&broker))
        .await
        .expect_err("active");
    assert_eq!(
        e.to_string(),
        "plugin oh-my-pi is active in 1 session(s); stop sessions first, or use --force"
    );
    assert_eq!(store.list().expect("list").len(), 1);
    assert_eq!(broker.tables("oh-my-pi").expect("tables"), ["presets"]);

    let gone = store
        .uninstall("oh-my-pi", 1, true, &[], Some(&broker))
        .await
        .expect("forced");
    assert_eq!(gone.dropped, ["plugin_oh_my_pi_presets"]);
    assert!(gone.stopped.is_empty(), "no running plugin was handed in");
    assert!(store.list().expect("list").is_empty());
    assert!(!store.plugin_dir("oh-my-pi").exists());
    assert!(broker.tables("oh-my-pi").expect("tables").is_empty());
    assert_eq!(
        broker.tables("other").expect("tables"),
        ["presets"],
        "other plugins keep their data"
    );
    let event = one(&audit, "plugin.uninstalled");
    assert_eq!(event.get("version"), &json!("1.0.0"));

    let e = store
        .uninstall("oh-my-pi", 0, false, &[], None)
        .await
        .expect_err("not installed");
    assert!(matches!(e, InstallError::NotInstalled { .. }), "{e}");
}

#[tokio::test]
async fn a_forced_uninstall_stops_the_plugins_running_sessions_first() {
    let (_root, store, audit) = store();
    store
        .install(&fixture("shell-adapter"), |_| true)
        .expect("install");
    // One audit log for the store and the host: the order is visible.
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(EASY).expect("scale"))
            .with_audit(audit.clone()),
    );
    let installed = host
        .launch(&store.plugin_dir("my-simple-adapter"))
        .await
        .expect("launch the installed copy");
    let other = host.launch(&fixture("good")).await.expect("launch good");
    let pid = installed.pid().expect("pid");
    let broker = StorageBroker::open_temp().expect("broker");
    broker
        .handle(
            &StorageClient::new("my-simple-adapter", true, true),
            StorageMethod::Exec,
            Some(json!({"sql": "CREATE TABLE notes (id TEXT)", "params": []})),
        )
        .expect("create");
    let running = [&installed, &other];

    // Refused: nothing is stopped.
    store
        .uninstall("my-simple-adapter", 1, false, &running, Some(&broker))
        .await
        .expect_err("active");
    assert!(installed.is_running());

    let gone = store
        .uninstall("my-simple-adapter", 1, true, &running, Some(&broker))
        .await
        .expect("forced");
    assert_eq!(gone.stopped.len(), 1, "only the plugin's own session");
    assert!(gone.stopped[0].is_clean(), "{:?}", gone.stopped[0]);
    assert!(!installed.is_running());
    assert_group_gone(pid);
    assert!(other.is_running(), "another plugin's plugin is left alone");
    assert_eq!(gone.dropped, ["plugin_my_simple_adapter_notes"]);
    assert!(!store.plugin_dir("my-simple-adapter").exists());
    // Stopped (the graceful ladder's events), then uninstalled.
    let trail: Vec<&str> = audit
        .events()
        .iter()
        .filter(|r| r.plugin == "my-simple-adapter")
        .map(|r| r.event.as_str())
        .collect();
    assert_eq!(
        trail,
        [
            "plugin.installed",
            "plugin.spawned",
            "plugin.initialized",
            "plugin.method_called",
            "plugin.method_returned",
            "plugin.exited",
            "plugin.stopped",
            "plugin.uninstalled"
        ]
    );
    assert!(other.shutdown().await.is_clean());
}

#[test]
fn the_consent_prompt_shows_where_path_grants_land() {
    let (_root, store, _audit) = store();
    let config = tempfile::tempdir().expect("tempdir");
    let config_root = std::fs::canonicalize(config.path()).expect("canonical");
    let store = store.with_config_root(Some(config_root.clone()));
    let src = tempfile::tempdir().expect("tempdir");
    manifest(
        src.path(),
        "1.0.0",
        &[
            "write:fs:config:/memory",
            "read:fs:/usr/share",
            "net:[]",
            "exec:sh:/opt/kaged-exec-demo",
        ],
    );
    let plan = store.plan(src.path()).expect("plan");
    let text = plan.render();
    // ADDENDUM §16: an `exec:` grant shows the binary it runs, resolved on
    // the spawn PATH.
    let sh = std::fs::canonicalize("/usr/bin/sh").expect("/usr/bin/sh");
    assert!(
        text.contains(&format!(
            "- exec:sh:/opt/kaged-exec-demo    (→ runs {} in /opt/kaged-exec-demo)",
            sh.display()
        )),
        "{text}"
    );
    let at = config_root.join("memory");
    assert!(
        text.contains(&format!(
            "- write:fs:config:/memory    (→ {})",
            at.display()
        )),
        "{text}"
    );
    // A path that is what it says shows as it is.
    assert!(text.contains("    - read:fs:/usr/share\n"), "{text}");
    assert!(!at.exists(), "planning creates nothing");

    // A `..` grant never reaches the prompt: the manifest is invalid.
    let bad = tempfile::tempdir().expect("tempdir");
    manifest(bad.path(), "1.0.0", &["write:fs:config:/../../../../tmp/x"]);
    let mut asked = false;
    let e = store
        .install(bad.path(), |_| {
            asked = true;
            true
        })
        .expect_err("refused");
    assert!(!asked);
    match &e {
        InstallError::InvalidManifest { report, .. } => assert!(
            report.contains("write:fs:config:/../../../../tmp/x") && report.contains("`..`"),
            "{report}"
        ),
        other => panic!("expected InvalidManifest, got {other}"),
    }
}

#[tokio::test]
async fn an_upgrade_restarts_the_running_plugin_on_the_new_copy() {
    // plugin-host.md § Upgrade: "Plugin was running; restarting... ✓
    // oh-my-pi restarted".
    let (_root, store, audit) = store();
    let v1 = shell_adapter_at("0.1.0");
    store.install(v1.path(), |_| true).expect("install 0.1.0");
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(EASY).expect("scale"))
            .with_audit(audit.clone()),
    );
    let dir = store.plugin_dir("my-simple-adapter");
    let sup = kaged_host_core::Supervisor::new(host.clone(), &dir);
    let other = kaged_host_core::Supervisor::new(host, fixture("good"));
    for s in [&sup, &other] {
        s.start().await.expect("start");
        s.subscribe()
            .wait_for(|s| *s == kaged_host_core::PluginState::Running)
            .await
            .expect("running");
    }
    let old_pid = sup.current().and_then(|s| s.pid()).expect("pid");
    let other_pid = other.current().and_then(|s| s.pid());

    let v2 = shell_adapter_at("0.2.0");
    store.install(v2.path(), |_| true).expect("upgrade");
    let restarted = store
        .restart_upgraded("my-simple-adapter", &[&sup, &other])
        .await;
    match &restarted[..] {
        [kaged_host_engine::UpgradeRestart::Restarted { pid, version }] => {
            assert_eq!(version, "0.2.0");
            assert_ne!(*pid, Some(old_pid));
        }
        other => panic!("{other:?}"),
    }
    assert_group_gone(old_pid);
    assert_eq!(
        other.current().and_then(|s| s.pid()),
        other_pid,
        "another plugin is left alone"
    );
    // Upgraded, the old process stopped gracefully, the new one spawned.
    let trail: Vec<(&str, serde_json::Value)> = audit
        .events()
        .iter()
        .filter(|r| r.plugin == "my-simple-adapter" && r.get("method") != "config.update")
        .map(|r| (r.event.as_str(), r.get("version").clone()))
        .collect();
    let names: Vec<&str> = trail.iter().map(|(n, _)| *n).collect();
    let upgraded = names
        .iter()
        .position(|n| *n == "plugin.upgraded")
        .expect("upgraded");
    assert_eq!(
        names[upgraded..],
        [
            "plugin.upgraded",
            "plugin.exited",
            "plugin.stopped",
            "plugin.spawned",
            "plugin.initialized"
        ],
        "{names:?}"
    );
    let spawned = trail
        .iter()
        .rfind(|t| t.0 == "plugin.spawned")
        .expect("spawned");
    assert_eq!(spawned.1, "0.2.0");
    sup.stop().await;
    other.stop().await;
    // A plugin that is not running is left as it is.
    let v3 = shell_adapter_at("0.3.0");
    store.install(v3.path(), |_| true).expect("upgrade");
    let left = store.restart_upgraded("my-simple-adapter", &[&sup]).await;
    assert!(
        matches!(
            &left[..],
            [kaged_host_engine::UpgradeRestart::NotRunning(
                kaged_host_core::PluginState::Stopped
            )]
        ),
        "{left:?}"
    );
}
