//! Where a Rust package's packed plugin directory is: the one place that
//! decides it. `cargo kaged pack` writes `<target dir>/kaged/<name>/`
//! ([`packed_dir`]) and install looks for it there in place of the
//! development directory ([`package_packed_dir`]). The target directory is
//! cargo's own answer (`cargo metadata`'s `target_directory`), so both
//! follow `CARGO_TARGET_DIR`, `build.target-dir` and a workspace's shared
//! `target/`.
//!
//! ```
//! use std::path::Path;
//! use kaged_host_engine::packed_dir;
//! assert_eq!(
//!     packed_dir(Path::new("/work/target"), "my-plugin"),
//!     Path::new("/work/target/kaged/my-plugin"),
//! );
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The directory under a target directory that packed plugins go into.
const PACKED: &str = "kaged";

/// The packed directory of plugin `name` under cargo's `target_dir`:
/// `<target_dir>/kaged/<name>`.
pub fn packed_dir(target_dir: &Path, name: &str) -> PathBuf {
    target_dir.join(PACKED).join(name)
}

/// Cargo's target directory for the package in `package_dir`, as
/// `cargo metadata` reports it (it honours `CARGO_TARGET_DIR`,
/// `build.target-dir` and workspaces); `None` when cargo cannot be run or
/// does not understand the package. Runs `$CARGO` (else `cargo`).
pub fn cargo_target_dir(package_dir: &Path) -> Option<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(package_dir)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    meta["target_directory"].as_str().map(PathBuf::from)
}

/// Where `cargo kaged pack` puts plugin `name` of the package in
/// `package_dir`: [`packed_dir`] under [`cargo_target_dir`], or under
/// `<package_dir>/target` when cargo cannot tell (cargo is not asked about
/// a directory without a `Cargo.toml`, which is no package).
pub fn package_packed_dir(package_dir: &Path, name: &str) -> PathBuf {
    let target = package_dir
        .join("Cargo.toml")
        .is_file()
        .then(|| cargo_target_dir(package_dir))
        .flatten()
        .unwrap_or_else(|| package_dir.join("target"));
    packed_dir(&target, name)
}
