//! The author's workflow end to end, with the real `cargo-kaged` binary
//! and real cargo builds:
//!
//! - `cargo kaged new x --kit-path <checkout>` in a temporary directory
//!   outside the workspace, then `cargo test` and `cargo kaged test` there,
//!   building into this workspace's target directory: the crates.io
//!   dependencies are compiled once, and the kit's crates get artifacts of
//!   their own (see [`outside_config`]);
//! - `cargo kaged pack -p kaged-example-oh-my-pi`, `kaged-host-sim plugin
//!   install` of the packed directory, and a call to the installed copy
//!   (release builds in this workspace's target directory).
//!
//! The release builds run with `opt-level = 0` (`CARGO_PROFILE_RELEASE_*`):
//! what is tested is the workflow, not the optimiser.

use std::path::{Path, PathBuf};
use std::process::Command;

use kaged_test_support::command::run_ok as ok;

/// The checkout this test runs in.
fn kit() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the checkout")
}

/// This build's target directory (`target/debug/cargo-kaged` → `target`).
fn target_dir() -> PathBuf {
    let exe = Path::new(env!("CARGO_BIN_EXE_cargo-kaged"));
    exe.ancestors()
        .nth(2)
        .expect("target/<profile>/cargo-kaged")
        .to_path_buf()
}

/// The crates of the kit, as an outside package depends on them.
const KIT_CRATES: [&str; 5] = [
    "kaged-plugin-protocol",
    "kaged-plugin-macros",
    "kaged-plugin-sdk",
    "kaged-host-sim",
    "kaged-conformance",
];

/// `.cargo/config.toml` of the temporary directory the outside package is
/// created in. Built from another workspace, a path dependency's
/// fingerprint differs (its source path is no longer workspace-relative),
/// so cargo would rebuild the kit's crates under the very file names this
/// workspace's build uses, and this build's later steps (doctests) would
/// find them changed. A per-package `codegen-units` override gives the
/// kit's crates other artifact names there; everything from crates.io is
/// shared. Release builds are unoptimised, as [`with_env`] makes them, and
/// unstripped (the scaffold's `strip = true` would change every
/// dependency's fingerprint; the guide test builds it as written).
fn outside_config() -> String {
    let mut text = String::from(
        "[profile.release]\nopt-level = 0\ndebug = false\nincremental = true\nstrip = false\n",
    );
    for profile in ["dev", "release"] {
        for krate in KIT_CRATES {
            text.push_str(&format!(
                "\n[profile.{profile}.package.{krate}]\ncodegen-units = 255\n"
            ));
        }
    }
    text
}

/// A command building in `target`, release builds unoptimised.
fn with_env(mut c: Command, target: &Path) -> Command {
    c.env("CARGO_TARGET_DIR", target)
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_INCREMENTAL", "true");
    c
}

fn cargo_kaged(cwd: &Path, target: &Path) -> Command {
    let mut c = with_env(Command::new(env!("CARGO_BIN_EXE_cargo-kaged")), target);
    c.arg("kaged").current_dir(cwd);
    c
}

#[test]
fn new_then_cargo_test_then_cargo_kaged_test_pass_outside_the_workspace() {
    if !kaged_host_sim::testing::cage_available_for_blocking("the author workflow") {
        return;
    }
    let place = tempfile::tempdir().expect("tempdir");
    let target = target_dir();
    std::fs::create_dir(place.path().join(".cargo")).expect("mkdir .cargo");
    std::fs::write(place.path().join(".cargo/config.toml"), outside_config())
        .expect("write .cargo/config.toml");
    let out = ok(cargo_kaged(place.path(), &target)
        .args([
            "new",
            "hello-kit",
            "--tool",
            "--hooks",
            "--storage",
            "--kit-path",
        ])
        .arg(kit()));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("Created plugin `hello-kit`"), "{said}");
    let dir = place.path().join("hello-kit");
    for file in [
        "Cargo.toml",
        "src/main.rs",
        "kaged-plugin.yaml",
        "kaged-plugin.base.yaml",
        "tests/conformance.rs",
        "tests/manifest_drift.rs",
    ] {
        assert!(dir.join(file).is_file(), "{file} missing");
    }
    let manifest = std::fs::read_to_string(dir.join("kaged-plugin.yaml")).expect("manifest");
    for line in [
        "name: hello-kit",
        "  - hello_kit.hello",
        "  - name: count_words",
        "  - on_session_start",
        "  - kaged:storage:write",
    ] {
        assert!(manifest.contains(line), "{line:?} missing from\n{manifest}");
    }

    // Its own tests: the manifest drift test and assert_conforms.
    let out = ok(with_env(cargo_kaged::cargo::cargo(), &target)
        .arg("test")
        .current_dir(&dir));
    let text = String::from_utf8_lossy(&out.stdout);
    for test in [
        "passes_the_conformance_suite ... ok",
        "kaged_plugin_yaml_is_current ... ok",
    ] {
        assert!(text.contains(test), "{test:?} missing from\n{text}");
    }

    // Packed, installed, certified; the JSON report on stdout.
    let out =
        ok(cargo_kaged(&dir, &target).args(["test", "--format", "json", "--cage", "require"]));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    assert_eq!(report["summary"]["failed"], 0, "{report:#}");
    assert_eq!(report["summary"]["warned"], 0, "{report:#}");
    assert_eq!(report["cage"], "bwrap", "{report:#}");
    let installed = report["plugin"]["dir"].as_str().expect("plugin.dir");
    assert!(
        installed.ends_with("store/plugins/hello-kit"),
        "{installed}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("installed a copy at"), "{err}");
}

#[test]
fn a_packed_example_installs_and_its_installed_copy_answers() {
    let place = tempfile::tempdir().expect("tempdir");
    let packed_root = place.path().join("packed");
    let out = ok(cargo_kaged(&kit(), &target_dir())
        .args(["pack", "-p", "kaged-example-oh-my-pi", "--out"])
        .arg(&packed_root));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("Packed oh-my-pi 0.1.0 into"), "{said}");
    assert!(said.contains("command: ./bin/oh-my-pi"), "{said}");
    let packed = packed_root.join("oh-my-pi");
    assert!(packed.join("bin/oh-my-pi").is_file());
    let manifest = std::fs::read_to_string(packed.join("kaged-plugin.yaml")).expect("manifest");
    assert!(
        manifest.contains("command:\n  - ./bin/oh-my-pi\n"),
        "{manifest}"
    );

    // Release (unoptimised), like the plugin: a dev build would replace
    // the `target/debug/kaged-host-sim` the host-sim's own tests run.
    ok(with_env(cargo_kaged::cargo::cargo(), &target_dir())
        .args([
            "build",
            "--release",
            "-p",
            "kaged-host-sim",
            "--bin",
            "kaged-host-sim",
        ])
        .current_dir(kit()));
    let host_sim = target_dir().join("release/kaged-host-sim");
    let home = place.path().join("home");
    let host = |args: &[&str]| {
        let mut c = Command::new(&host_sim);
        c.env("KAGED_HOME", &home).args(args);
        c
    };
    let out = ok(host(&["plugin", "install"]).arg(&packed).arg("--yes"));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("✓ Installed oh-my-pi 0.1.0"), "{said}");

    // Enabled (a disabled copy is not started), the installed copy runs on
    // its own: the packed directory can go.
    ok(&mut host(&["plugin", "enable", "oh-my-pi"]));
    std::fs::remove_dir_all(&packed_root).expect("remove the packed dir");
    let installed = home.join("plugins/oh-my-pi");
    let out = ok(host(&["call"])
        .arg(&installed)
        .args(["presets.list", "{}", "--json"]));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON answer");
    assert_eq!(answer, serde_json::json!({"presets": [], "revision": 0}));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cage"),
        "the call says whether it was caged: {err}"
    );

    // The development directory is refused, saying to pack first.
    let out = host(&["plugin", "install"])
        .arg(kit().join("examples/oh-my-pi"))
        .arg("--yes")
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("pack the plugin first"), "{err}");
}
