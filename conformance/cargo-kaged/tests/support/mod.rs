//! What the tests that build a package outside the workspace share: the
//! checkout, its target directory, the kit's command-line tools, and the
//! `.cargo/config.toml` that lets an outside package reuse this
//! workspace's compiled dependencies.

// Each test binary uses a part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use kaged_test_support::command::run_ok;

/// The checkout these tests run in.
pub fn kit() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the checkout")
}

/// This build's target directory (`target/debug/cargo-kaged` → `target`).
pub fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_cargo-kaged"))
        .ancestors()
        .nth(2)
        .expect("target/<profile>/cargo-kaged")
        .to_path_buf()
}

/// The crates of the kit, as an outside package depends on them.
const KIT_CRATES: [&str; 8] = [
    "kaged-plugin-protocol",
    "kaged-plugin-macros",
    "kaged-plugin-sdk",
    "kaged-host-core",
    "kaged-host-storage",
    "kaged-host-engine",
    "kaged-host-sim",
    "kaged-conformance",
];

/// Write `.cargo/config.toml` into `dir`, for packages created under it.
///
/// Their intermediate artifacts go to this workspace's target directory
/// (`build.build-dir`), so everything from crates.io that this workspace
/// compiled is reused; final artifacts stay in the package's own
/// `target/` (a manifest's `./target/debug/x` is inside the plugin
/// directory, as an author's is). Built from another workspace, a kit
/// crate's fingerprint differs (its source path is no longer
/// workspace-relative), so cargo would rebuild it under the very file
/// names this workspace's build uses and this build's later steps
/// (doctests) would find them changed: a per-package `codegen-units`
/// override gives the kit's crates artifact names of their own there.
/// The `dev` profile is the workspace's own (`Cargo.toml`).
pub fn outside_config(dir: &Path) {
    let build_dir = serde_json::Value::from(target_dir().display().to_string());
    // The workspace's `[profile.dev]`: another profile would give every
    // dependency another fingerprint.
    let mut text = format!(
        "[build]\nbuild-dir = {build_dir}\n\n[profile.dev]\ndebug = \"line-tables-only\"\n\n[profile.dev.package.\"*\"]\ndebug = false\n"
    );
    for krate in KIT_CRATES {
        text.push_str(&format!(
            "\n[profile.dev.package.{krate}]\ncodegen-units = 255\n"
        ));
    }
    std::fs::create_dir_all(dir.join(".cargo")).expect("mkdir .cargo");
    std::fs::write(dir.join(".cargo/config.toml"), text).expect("write .cargo/config.toml");
}

/// The kit's tools as this workspace builds them for its own tests
/// (`target/debug/…`): `cargo test --workspace --no-run`, which does
/// nothing when this test runs under the README's test command (cargo
/// built every workspace binary before the first test ran), and builds
/// them when only this package's tests run. A narrower `cargo build -p …`
/// would unify features differently and replace the binaries the other
/// packages' tests run.
pub fn tools() -> [(&'static str, PathBuf); 3] {
    run_ok(
        kaged_cargo()
            .args(["test", "--workspace", "--no-run", "--quiet"])
            .current_dir(kit()),
    );
    let debug = target_dir().join("debug");
    [
        (
            "cargo-kaged",
            PathBuf::from(env!("CARGO_BIN_EXE_cargo-kaged")),
        ),
        ("kaged-host-sim", debug.join("kaged-host-sim")),
        ("kaged-conformance", debug.join("kaged-conformance")),
    ]
}

/// `cargo`, building into this workspace's target directory.
fn kaged_cargo() -> std::process::Command {
    let mut c = cargo_kaged::cargo::cargo();
    c.env("CARGO_TARGET_DIR", target_dir());
    c
}

/// Link the kit's tools into `bin` (a directory to put first on `PATH`).
pub fn link_tools(bin: &Path) {
    std::fs::create_dir_all(bin).expect("mkdir bin");
    for (name, path) in tools() {
        assert!(path.is_file(), "{} was not built", path.display());
        std::os::unix::fs::symlink(path, bin.join(name)).expect("link a tool");
    }
}

/// Give a package created outside the workspace this workspace's
/// `Cargo.lock` (once, before its first build), so that it resolves the
/// same dependency versions and reuses their compiled artifacts instead of
/// whatever crates.io holds today.
pub fn seed_lock(package: &Path) {
    let lock = package.join("Cargo.lock");
    if package.join("Cargo.toml").is_file() && !lock.exists() {
        std::fs::copy(kit().join("Cargo.lock"), &lock).expect("copy Cargo.lock");
    }
}
