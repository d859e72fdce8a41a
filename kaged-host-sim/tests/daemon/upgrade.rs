//! plugin-host.md § Upgrade: "Plugin was running; restarting... ✓
//! oh-my-pi restarted": `plugin install` of a new version into the store a
//! running `up --store` serves restarts the plugin there.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;

use crate::harness::Up;
use crate::support::host::fixture;

/// A copy of the shell adapter at `version` (manifest and initialize
/// answer).
fn shell_adapter_at(version: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for file in ["kaged-plugin.yaml", "plugin.sh"] {
        let text = std::fs::read_to_string(fixture("shell-adapter").join(file)).expect("read");
        std::fs::write(dir.path().join(file), text.replace("0.1.0", version)).expect("write");
    }
    let script = dir.path().join("plugin.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

fn plugin_cli(store: &std::path::Path, args: &[&OsStr]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kaged-host-sim"))
        .env_remove("KAGED_HOME")
        .arg("plugin")
        .args(args)
        .arg("--store")
        .arg(store)
        .output()
        .expect("run")
}

#[test]
fn an_upgrade_restarts_the_plugin_in_the_running_daemon() {
    let store = tempfile::tempdir().expect("tempdir");
    let v1 = shell_adapter_at("0.1.0");
    let out = plugin_cli(
        store.path(),
        &[
            OsStr::new("install"),
            v1.path().as_os_str(),
            OsStr::new("--yes"),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = plugin_cli(
        store.path(),
        &[OsStr::new("enable"), OsStr::new("my-simple-adapter")],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
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
    let out = plugin_cli(
        store.path(),
        &[
            OsStr::new("install"),
            v2.path().as_os_str(),
            OsStr::new("--yes"),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    let out = plugin_cli(
        store.path(),
        &[OsStr::new("disable"), OsStr::new("my-simple-adapter")],
    );
    assert!(out.status.success());
    let (status, _) = up.http("POST", "/api/v1/plugins/my-simple-adapter/disable", None);
    assert_eq!(status, 200);
    let v3 = shell_adapter_at("0.3.0");
    let out = plugin_cli(
        store.path(),
        &[
            OsStr::new("install"),
            v3.path().as_os_str(),
            OsStr::new("--yes"),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("restarting"), "{text}");
}
