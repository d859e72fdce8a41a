//! plugin-host.md § Upgrade: "Plugin was running; restarting... ✓
//! oh-my-pi restarted": `plugin install` of a new version into the store a
//! running `up --store` serves restarts the plugin there.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::harness::Up;
use crate::support::host::shell_adapter_at;
use kaged_test_support::command::assert_success;

/// `kaged-host-sim plugin ARGS --store STORE`, which must succeed: its
/// stdout.
fn plugin(store: &Path, args: &[&OsStr]) -> String {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_kaged-host-sim"));
    c.env_remove("KAGED_HOME")
        .arg("plugin")
        .args(args)
        .arg("--store")
        .arg(store);
    let out = c.output().expect("run");
    assert_success(format_args!("{c:?}"), &out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `plugin install DIR --yes`: its stdout.
fn install(store: &Path, dir: &Path) -> String {
    plugin(
        store,
        &[OsStr::new("install"), dir.as_os_str(), OsStr::new("--yes")],
    )
}

#[test]
fn an_upgrade_restarts_the_plugin_in_the_running_daemon() {
    let store = tempfile::tempdir().expect("tempdir");
    let v1 = shell_adapter_at("0.1.0");
    install(store.path(), v1.path());
    plugin(
        store.path(),
        &[OsStr::new("enable"), OsStr::new("my-simple-adapter")],
    );

    let up = Up::start_args(&[OsStr::new("--store"), store.path().as_os_str()]);
    let row = up.wait_plugin("my-simple-adapter", |p| p["state"] == "running");
    assert_eq!(row["version"], "0.1.0");
    let old = row["pid"].clone();
    // Where the plugin commands find it: the API and token, for the owner only.
    let link = store.path().join("daemon.json");
    let mode = std::fs::metadata(&link)
        .expect("daemon.json")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    let v2 = shell_adapter_at("0.2.0");
    let text = install(store.path(), v2.path());
    assert!(text.contains("New version: 0.2.0"), "{text}");
    assert!(
        text.contains("  Plugin was running; restarting...\n✓ my-simple-adapter restarted (0.2.0)"),
        "{text}"
    );
    let row = up.plugin("my-simple-adapter");
    assert_eq!(
        (row["state"].as_str(), row["version"].as_str()),
        (Some("running"), Some("0.2.0")),
        "{row}"
    );
    assert_ne!(row["pid"], old);

    // A plugin the daemon does not run is only upgraded.
    plugin(
        store.path(),
        &[OsStr::new("disable"), OsStr::new("my-simple-adapter")],
    );
    let (status, _) = up.http("POST", "/api/v1/plugins/my-simple-adapter/disable", None);
    assert_eq!(status, 200);
    let v3 = shell_adapter_at("0.3.0");
    let text = install(store.path(), v3.path());
    assert!(!text.contains("restarting"), "{text}");
}
