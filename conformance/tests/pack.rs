//! `kaged_conformance::pack`: a packed directory is self-contained (the
//! executable under `bin/`, `command[0]` pointing at it, the files the
//! command names copied), installs, and its installed copy starts; what
//! cannot be packed is refused with an error naming it.

use std::path::{Path, PathBuf};

use kaged_conformance::pack::{install_packed, pack, PackError, PackInput};
use kaged_host_core::validate::validate_dir;
use kaged_host_core::{HostConfig, HostSim};
use kaged_plugin_protocol::manifest::Manifest;

/// The spec's shell adapter (bash + jq), as a "built" executable.
fn shell_adapter() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kaged-host-sim/tests/fixtures/plugins/shell-adapter/plugin.sh")
}

/// A package directory (`<tempdir>/pkg`) whose dev manifest points outside
/// it (as the examples' do), with a data file inside it and a
/// `secrets.txt` next to it.
fn package(extra_args: &str) -> (Package, String) {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("pkg");
    std::fs::create_dir_all(dir.join("data")).expect("mkdir");
    std::fs::write(dir.join("data/greeting.txt"), "hi\n").expect("write");
    std::fs::write(root.path().join("secrets.txt"), "x").expect("write");
    let manifest = format!(
        "name: my-simple-adapter\nversion: 0.1.0\nkaged_api: 1\ndescription: d\n\
         command: [../../target/debug/plugin.sh{extra_args}]\ncapabilities:\n  - net: []\nmethods: [status.get]\n"
    );
    (Package { _root: root, dir }, manifest)
}

/// A package directory inside a temporary root.
struct Package {
    _root: tempfile::TempDir,
    dir: PathBuf,
}

impl Package {
    fn path(&self) -> &Path {
        &self.dir
    }
}

#[test]
fn a_packed_dir_has_the_binary_under_bin_and_the_files_the_command_names() {
    let (src, manifest) = package(", --greeting, ./data/greeting.txt");
    let out = tempfile::tempdir().expect("tempdir");
    let dest = out.path().join("my-simple-adapter");
    let binary = shell_adapter();
    let input = PackInput {
        manifest: &manifest,
        binary: &binary,
        source_dir: src.path(),
    };
    let packed = pack(&input, &dest).expect("pack");
    assert_eq!(packed.command, "./bin/plugin.sh");
    assert_eq!(packed.files, [PathBuf::from("data/greeting.txt")]);
    assert!(packed.warnings.is_empty(), "{:?}", packed.warnings);
    assert!(dest.join("bin/plugin.sh").is_file());
    assert!(dest.join("data/greeting.txt").is_file());
    let text = std::fs::read_to_string(dest.join("kaged-plugin.yaml")).expect("manifest");
    let packed_manifest = Manifest::from_yaml_str(&text).expect("the packed manifest parses");
    assert_eq!(
        packed_manifest.command,
        ["./bin/plugin.sh", "--greeting", "./data/greeting.txt"],
        "{text}"
    );
    let report = validate_dir(&dest);
    assert!(report.problems.is_empty(), "{}", report.render_human());

    // Packing again replaces the earlier pack.
    pack(&input, &dest).expect("pack again");
}

#[tokio::test]
async fn the_installed_copy_of_a_packed_dir_starts_without_the_package() {
    let (src, manifest) = package("");
    let out = tempfile::tempdir().expect("tempdir");
    let binary = shell_adapter();
    let input = PackInput {
        manifest: &manifest,
        binary: &binary,
        source_dir: src.path(),
    };
    let packed = pack(&input, &out.path().join("packed")).expect("pack");
    let store = tempfile::tempdir().expect("tempdir");
    let installed = install_packed(&packed.dir, store.path()).expect("install");
    drop(out); // the packed directory is gone; the installed copy stands alone
    let host = HostSim::new(HostConfig::default());
    let session = host
        .launch(&installed)
        .await
        .expect("launch the installed copy");
    session.ping().await.expect("ping");
    session.shutdown().await;
}

#[test]
fn what_cannot_be_packed_is_refused_naming_it() {
    let binary = shell_adapter();
    let (src, manifest) = package(", ../secrets.txt");
    let out = tempfile::tempdir().expect("tempdir");
    let input = PackInput {
        manifest: &manifest,
        binary: &binary,
        source_dir: src.path(),
    };
    let e = pack(&input, &out.path().join("p")).expect_err("a file outside the package");
    assert!(
        matches!(&e, PackError::FileOutside { arg, .. } if arg == "../secrets.txt"),
        "{e}"
    );

    // No executable.
    let (src, manifest) = package("");
    let missing = src.path().join("target/release/nothing");
    let e = pack(
        &PackInput {
            manifest: &manifest,
            binary: &missing,
            source_dir: src.path(),
        },
        &out.path().join("p"),
    )
    .expect_err("no binary");
    assert!(e.to_string().contains("build it first"), "{e}");

    // An output directory that is something else.
    let occupied = out.path().join("occupied");
    std::fs::create_dir_all(&occupied).expect("mkdir");
    std::fs::write(occupied.join("notes.txt"), "mine").expect("write");
    let e = pack(
        &PackInput {
            manifest: &manifest,
            binary: &binary,
            source_dir: src.path(),
        },
        &occupied,
    )
    .expect_err("occupied");
    assert!(matches!(e, PackError::OutOccupied { .. }), "{e}");
    assert!(
        occupied.join("notes.txt").is_file(),
        "nothing of it removed"
    );

    // A manifest that does not parse.
    let e = pack(
        &PackInput {
            manifest: "name: [",
            binary: &binary,
            source_dir: src.path(),
        },
        &out.path().join("q"),
    )
    .expect_err("bad manifest");
    assert!(matches!(e, PackError::Manifest(_)), "{e}");
}
