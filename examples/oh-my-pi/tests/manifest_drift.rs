//! The checked-in `kaged-plugin.yaml` is the one the code implies (the
//! binary's `--print-manifest`: code + `kaged-plugin.base.yaml`), and it
//! declares what the spec's oh-my-pi handshake example shows.

use kaged_plugin_sdk::manifest::Manifest;

#[test]
fn kaged_plugin_yaml_is_current() {
    kaged_plugin_sdk::testing::assert_binary_manifest_current(
        env!("CARGO_BIN_EXE_oh-my-pi"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/kaged-plugin.yaml"),
    );
}

#[test]
fn manifest_declares_the_spec_methods_notification_and_storage() {
    let m = Manifest::load_dir(env!("CARGO_MANIFEST_DIR").as_ref()).expect("manifest");
    assert_eq!(m.name, "oh-my-pi");
    assert_eq!(m.storage_prefix(), "plugin_oh_my_pi_");
    for method in [
        "presets.list",
        "presets.search",
        "preset.install",
        "preset.uninstall",
    ] {
        assert!(
            m.methods.iter().any(|x| x == method),
            "{method} in {:?}",
            m.methods
        );
    }
    assert_eq!(m.notifications, ["catalog.updated"]);
    assert_eq!(
        m.capability_strings(),
        [
            "net:[]",
            "read:fs:/opt/oh-my-pi",
            "kaged:storage:read",
            "kaged:storage:write"
        ]
    );
    assert_eq!(m.command, ["../../target/debug/oh-my-pi"]);
    let config = m.config_schema.as_ref().expect("config_schema");
    assert_eq!(
        config["properties"]["preset_dir"]["default"],
        "/opt/oh-my-pi/presets"
    );
}
