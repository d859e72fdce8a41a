//! The checked-in `kaged-plugin.yaml` is the one the code implies (the
//! binary's `--print-manifest`: code + `kaged-plugin.base.yaml` + the
//! system config type), its tool schemas are valid, and it is the manifest
//! the spec's Full schema example describes.

use kaged_plugin_sdk::manifest::Manifest;

#[test]
fn kaged_plugin_yaml_is_current() {
    kaged_plugin_sdk::testing::assert_binary_manifest_current(
        env!("CARGO_BIN_EXE_memory-markdown"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/kaged-plugin.yaml"),
    );
}

#[test]
fn manifest_has_the_reference_plugin_shape() {
    let m = Manifest::load_dir(env!("CARGO_MANIFEST_DIR").as_ref()).expect("manifest");
    let tools: Vec<&str> = m.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["retain", "recall", "forget", "list_tags"]);
    assert_eq!(
        m.hooks,
        [
            "on_session_start",
            "on_session_idle",
            "pre_compact",
            "post_compact"
        ]
    );
    assert_eq!(m.roles.as_deref(), Some(&["observer".to_string()][..]));
    assert_eq!(
        m.capability_strings(),
        [
            "read:fs:config:/memory",
            "write:fs:config:/memory",
            "net:[]"
        ]
    );
    assert_eq!(m.command, ["../../target/debug/memory-markdown"]);
    let config = m.config_schema.as_ref().expect("config_schema");
    let system = m
        .system_config_schema
        .as_ref()
        .expect("system_config_schema");
    assert_eq!(config["properties"]["store"]["default"], "config:/memory");
    assert!(
        config["properties"].get("redact_secrets").is_none(),
        "secrets stay out of the committed schema"
    );
    assert!(system["properties"].get("redact_secrets").is_some());
    let knobs: Vec<&str> = m.knobs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        knobs,
        [
            "store",
            "isolation",
            "recent_on_start",
            "retain_every_n_turns"
        ]
    );
    for t in &m.tools {
        assert!(!t.description.is_empty(), "{} has a description", t.name);
    }
}
