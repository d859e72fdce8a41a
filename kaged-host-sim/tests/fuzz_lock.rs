//! The fuzz crates (`kaged-host-sim/fuzz`, `kaged-plugin-sdk/protocol/fuzz`)
//! are their own workspaces with their own `Cargo.lock`, which `.ci/run`
//! checks with `--locked`. A dependency added to a fuzzed crate makes those
//! lock files stale without touching them; this test names the stale one
//! here, before CI does. Refresh with
//! `cargo metadata --format-version 1 --manifest-path <crate>/fuzz/Cargo.toml > /dev/null`.

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
