//! `cargo kaged pack` and install agree on where a package's packed
//! directory is, also when `CARGO_TARGET_DIR` moves the target directory.
//! The variable is set only in a child process (this test binary run
//! again for [`child_reports_packed_dirs`]), never in this process.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Set in the child: the package directory to report on.
const CHILD: &str = "CARGO_KAGED_PACKED_DIR_CHILD";
const NAME: &str = "my-plugin";

fn package(dir: &Path) {
    let toml =
        "[package]\nname = \"my-plugin\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";
    std::fs::write(dir.join("Cargo.toml"), toml).expect("Cargo.toml");
    std::fs::create_dir_all(dir.join("src")).expect("src");
    std::fs::write(dir.join("src/main.rs"), "fn main() {}\n").expect("main.rs");
}

/// The packed directories the child reports: `(pack, install)`.
fn reported(pkg: &Path, target: Option<&Path>) -> (PathBuf, PathBuf) {
    let exe = std::env::current_exe().expect("the test binary");
    let mut c = Command::new(exe);
    c.args(["--exact", "child_reports_packed_dirs", "--nocapture"])
        .args(["--test-threads", "1"])
        .env(CHILD, pkg)
        .env_remove("CARGO_TARGET_DIR");
    kaged_test_support::command::outside_the_kit(&mut c);
    if let Some(t) = target {
        c.env("CARGO_TARGET_DIR", t);
    }
    let out = c.output().expect("run the child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |key: &str| {
        stdout
            .lines()
            .find_map(|l| l.split_once(key).map(|(_, path)| path))
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("no {key} line in:\n{stdout}"))
    };
    (line("pack="), line("install="))
}

#[test]
fn pack_and_install_agree_under_cargo_target_dir() {
    let pkg = tempfile::tempdir().expect("tempdir");
    package(pkg.path());
    let target = tempfile::tempdir().expect("tempdir");
    let (pack, install) = reported(pkg.path(), Some(target.path()));
    assert_eq!(pack, install);
    assert_eq!(pack, target.path().join("kaged").join(NAME));
}

#[test]
fn pack_and_install_agree_without_cargo_target_dir() {
    let pkg = tempfile::tempdir().expect("tempdir");
    package(pkg.path());
    let (pack, install) = reported(pkg.path(), None);
    assert_eq!(pack, install);
    assert!(
        pack.ends_with(Path::new("target/kaged").join(NAME)),
        "{}",
        pack.display()
    );
}

/// Run by the tests above in a child process (does nothing otherwise):
/// prints where `cargo kaged pack` would write and where install looks.
#[test]
fn child_reports_packed_dirs() {
    let Some(dir) = std::env::var_os(CHILD).map(PathBuf::from) else {
        return;
    };
    let package = cargo_kaged::cargo::find_package(None, &dir).expect("the package");
    let pack = cargo_kaged::packing::pack_dir(None, &package, NAME);
    let install = kaged_host_engine::package_packed_dir(&dir, NAME);
    println!("pack={}", pack.display());
    println!("install={}", install.display());
}
