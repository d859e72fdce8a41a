//! The checked-in `kaged-plugin.yaml` is the one the code implies: the
//! binary's `--print-manifest` output (code + `kaged-plugin.base.yaml`)
//! parses to the same manifest, and its tool schemas are valid.

#[test]
fn kaged_plugin_yaml_is_current() {
    kaged_plugin_sdk::testing::assert_binary_manifest_current(
        env!("CARGO_BIN_EXE_sdk-testbed"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/kaged-plugin.yaml"),
    );
}

#[test]
fn printed_manifest_lists_every_method_in_declaration_order() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sdk-testbed"))
        .arg("--print-manifest")
        .output()
        .expect("run sdk-testbed --print-manifest");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8 manifest");
    let m = kaged_plugin_sdk::manifest::Manifest::from_yaml_str(&text).expect("a manifest");
    assert_eq!(
        m.methods,
        [
            "testbed.echo",
            "testbed.print",
            "testbed.panic",
            "testbed.big",
            "testbed.sleep",
            "testbed.store",
            "testbed.store_many",
            "testbed.notify"
        ]
    );
    assert_eq!(m.notifications, ["testbed.poked"]);
    assert_eq!(m.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(m.command, ["../../target/debug/sdk-testbed"]);
}
