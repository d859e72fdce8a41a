//! The checked-in `kaged-plugin.yaml` is the one the code implies, and it
//! declares both roles with the compaction hooks.

use kaged_plugin_sdk::manifest::Manifest;

#[test]
fn kaged_plugin_yaml_is_current() {
    kaged_plugin_sdk::testing::assert_binary_manifest_current(
        env!("CARGO_BIN_EXE_summarizing-compactor"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/kaged-plugin.yaml"),
    );
}

#[test]
fn manifest_declares_both_roles_and_the_compaction_hooks() {
    let m = Manifest::load_dir(env!("CARGO_MANIFEST_DIR").as_ref()).expect("manifest");
    assert_eq!(
        m.roles,
        Some(vec!["observer".to_string(), "compactor".to_string()])
    );
    assert_eq!(m.hooks, ["pre_compact", "post_compact"]);
    assert_eq!(m.capability_strings(), ["net:[]"]);
    let knobs: Vec<&str> = m.knobs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(knobs, ["max_summary_chars", "keep_last_n"]);
    let schema = m.config_schema.as_ref().expect("config_schema");
    assert_eq!(schema["properties"]["keep_last_n"]["default"], 2);
}
