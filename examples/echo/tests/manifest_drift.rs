//! The checked-in `kaged-plugin.yaml` is the one echo's code implies
//! (`echo --print-manifest`), and the `shout` tool schema is valid.

use kaged_plugin_sdk::manifest::Manifest;
use kaged_plugin_sdk::testing;

const YAML: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/kaged-plugin.yaml");

#[test]
fn kaged_plugin_yaml_is_current() {
    testing::assert_binary_manifest_current(env!("CARGO_BIN_EXE_echo"), YAML);
}

#[test]
fn a_drifted_manifest_is_reported_with_a_diff() {
    let path =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("echo-drifted-kaged-plugin.yaml");
    let text = std::fs::read_to_string(YAML).expect("read the manifest");
    std::fs::write(&path, text.replace("  - echo.said\n", "  - echo.heard\n")).expect("write");
    let err = testing::check_binary_manifest_current(env!("CARGO_BIN_EXE_echo"), &path)
        .expect_err("the edited manifest must be reported");
    let report = err.to_string();
    assert!(
        report.contains("-   - echo.heard\n+   - echo.said\n"),
        "{report}"
    );
    // The generated tool schema is checked too.
    let generated = Manifest::from_yaml_str(&text).expect("parse");
    testing::check_tool_schemas(&generated).expect("valid schemas");
}
