//! The fuzz crates (`kaged-host-sim/fuzz`, `kaged-plugin-sdk/protocol/fuzz`)
//! are their own workspaces with their own `Cargo.lock`, which `.ci/run`
//! checks with `--locked`. A dependency added to a fuzzed crate makes those
//! lock files stale without touching them; this test names the stale one
//! here, before CI does. Refresh with
//! `cargo metadata --format-version 1 --manifest-path <crate>/fuzz/Cargo.toml > /dev/null`.
//!
//! `.ci/run` checks them in the workspace's `target/`, so they end with the
//! workspace's own `[profile.dev]`: another profile gives every dependency
//! another fingerprint, and nothing already built would be reused.

use std::path::Path;
use std::process::Command;

const FUZZ_WORKSPACES: [&str; 2] = ["kaged-host-sim/fuzz", "kaged-plugin-sdk/protocol/fuzz"];

#[test]
fn every_fuzz_lock_file_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let stale: Vec<String> = FUZZ_WORKSPACES
        .iter()
        .filter_map(|dir| {
            let manifest = root.join(dir).join("Cargo.toml");
            let out = Command::new(&cargo)
                .args([
                    "metadata",
                    "--locked",
                    "--format-version",
                    "1",
                    "--manifest-path",
                ])
                .arg(&manifest)
                .output()
                .expect("run cargo metadata");
            (!out.status.success()).then(|| {
                format!(
                    "{dir}/Cargo.lock: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )
            })
        })
        .collect();
    assert!(
        stale.is_empty(),
        "stale fuzz lock files (refresh with `cargo metadata --format-version 1 --manifest-path DIR/Cargo.toml`):\n{}",
        stale.join("\n")
    );
}

/// The `[profile.dev]` tables at the end of a manifest, as written.
fn dev_profile(manifest: &Path) -> String {
    let text = std::fs::read_to_string(manifest).expect("read a manifest");
    let start = text
        .find("\n[profile.dev]")
        .unwrap_or_else(|| panic!("{} has no [profile.dev]", manifest.display()));
    text[start..].trim().to_string()
}

#[test]
fn every_fuzz_workspace_builds_with_the_workspace_dev_profile() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let ours = dev_profile(&root.join("Cargo.toml"));
    for dir in FUZZ_WORKSPACES {
        assert_eq!(
            dev_profile(&root.join(dir).join("Cargo.toml")),
            ours,
            "{dir}/Cargo.toml ends with another [profile.dev] than the workspace's"
        );
    }
}
