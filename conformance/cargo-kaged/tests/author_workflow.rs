//! The author's workflow end to end, with the real `cargo-kaged` binary
//! and real cargo builds, in a temporary directory outside the workspace:
//! `cargo kaged new x --kit-path <checkout>`, then `cargo test` and
//! `cargo kaged test` there; then `cargo kaged pack -p x`, `kaged-host-sim
//! plugin install` of the packed directory, and a call to the installed
//! copy once the packed directory is gone. The package's build shows no
//! warning, in it or in the kit's crates it compiles (the lean suite among
//! them): `.ci/run` has no separate lean build.
//!
//! The package reuses this workspace's compiled dependencies
//! ([`support::outside_config`]), and packs and certifies with the `dev`
//! profile (`--profile dev`): what is tested is the workflow, not the
//! optimiser, and a release build would compile every dependency again.
//! The tools are this workspace's own builds ([`support::tools`]).

mod support;

use std::path::Path;
use std::process::Command;

use kaged_test_support::command::{outside_the_kit, run_ok as ok};

use support::{kit, outside_config, seed_lock, tools};

/// `cargo-kaged` with the workspace's `CARGO_TARGET_DIR` removed (the
/// package builds into its own `target/`), and outside the kit's lint
/// wrapper.
fn cargo_kaged(cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cargo-kaged"));
    c.arg("kaged")
        .current_dir(cwd)
        .env_remove("CARGO_TARGET_DIR");
    outside_the_kit(&mut c);
    c
}

#[test]
fn new_test_pack_install_call_outside_the_workspace() {
    if !kaged_host_core::testing::cage_available_for_blocking("the author workflow") {
        return;
    }
    let place = tempfile::tempdir().expect("tempdir");
    outside_config(place.path());
    let out = ok(cargo_kaged(place.path())
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
    seed_lock(&dir);
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
    let out = ok(outside_the_kit(&mut cargo_kaged::cargo::cargo())
        .arg("test")
        .current_dir(&dir)
        .env_remove("CARGO_TARGET_DIR"));
    // The kit's crates are path dependencies here, so rustc's warnings show:
    // the package and everything it builds (the SDK, and the suite without
    // its command line, as a plugin's dev-dependency) compile without one.
    // This is `.ci/run`'s check of the lean build.
    let built = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = built
        .lines()
        .filter(|l| l.trim_start().starts_with("warning"))
        .collect();
    assert!(
        warnings.is_empty(),
        "the new plugin's build warns:\n{}\n\nfull output:\n{built}",
        warnings.join("\n")
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for test in [
        "passes_the_conformance_suite ... ok",
        "kaged_plugin_yaml_is_current ... ok",
    ] {
        assert!(text.contains(test), "{test:?} missing from\n{text}");
    }

    // Packed, installed, certified; the JSON report on stdout.
    let out = ok(cargo_kaged(&dir).args([
        "test",
        "--profile",
        "dev",
        "--format",
        "json",
        "--cage",
        "require",
    ]));
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

    packed_copy_installs_and_answers(place.path(), &dir);
}

/// `cargo kaged pack -p` (the build `cargo kaged test` just made), install
/// into a home of its own, enable, then call the installed copy once the
/// packed directory is gone; the development directory is refused.
fn packed_copy_installs_and_answers(place: &Path, dir: &Path) {
    let packed_root = place.join("packed");
    let out = ok(cargo_kaged(dir)
        .args(["pack", "-p", "hello-kit", "--profile", "dev", "--out"])
        .arg(&packed_root));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("Packed hello-kit 0.1.0 into"), "{said}");
    assert!(said.contains("command: ./bin/hello-kit"), "{said}");
    let packed = packed_root.join("hello-kit");
    assert!(packed.join("bin/hello-kit").is_file());
    // `cargo kaged pack … | head`: packed all the same, no panic.
    let piped_root = place.join("packed-piped");
    let out = kaged_test_support::command::assert_quiet_on_closed_stdout(
        cargo_kaged(dir)
            .args(["pack", "-p", "hello-kit", "--profile", "dev", "--out"])
            .arg(&piped_root),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(piped_root.join("hello-kit/bin/hello-kit").is_file());
    let manifest = std::fs::read_to_string(packed.join("kaged-plugin.yaml")).expect("manifest");
    assert!(
        manifest.contains("command:\n  - ./bin/hello-kit\n"),
        "{manifest}"
    );

    let [_, (_, host_sim), _] = tools();
    let home = place.join("home");
    let host = |args: &[&str]| {
        let mut c = Command::new(&host_sim);
        c.env("KAGED_HOME", &home).args(args);
        c
    };
    let out = ok(host(&["plugin", "install"]).arg(&packed).arg("--yes"));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("✓ Installed hello-kit 0.1.0"), "{said}");

    // Enabled (a disabled copy is not started), the installed copy runs on
    // its own: the packed directory can go.
    ok(&mut host(&["plugin", "enable", "hello-kit"]));
    std::fs::remove_dir_all(&packed_root).expect("remove the packed dir");
    let installed = home.join("plugins/hello-kit");
    let out = ok(host(&["call"]).arg(&installed).args([
        "hello_kit.hello",
        r#"{"name": "kit"}"#,
        "--json",
    ]));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON answer");
    assert_eq!(answer, serde_json::json!("Hello, kit!"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cage"),
        "the call says whether it was caged: {err}"
    );

    // Without a packed layout (`target/kaged/hello-kit`: the pack above
    // went to `--out`) the development directory installs as it is, its
    // `target/` included (ADDENDUM §16): the prompt is shown, and warns,
    // naming `cargo kaged pack`, exactly when the copy is over 256 MiB.
    // (Declined here: no terminal and no `--yes`, so nothing is copied.)
    assert!(!dir.join("target/kaged/hello-kit").exists());
    let out = host(&["plugin", "install"])
        .arg(dir)
        .env("KAGED_HOME", place.join("home-dev"))
        .output()
        .expect("run");
    let said = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("Install hello-kit?") || said.contains("name: hello-kit"),
        "{said}\n{err}"
    );
    assert!(err.contains("pass --yes"), "{err}");
    let large = tree_bytes(dir) > kaged_host_engine::LARGE_COPY_BYTES;
    assert_eq!(
        said.contains("under target/ (build output)") && said.contains("`cargo kaged pack`"),
        large,
        "{said}"
    );
}

/// The bytes of the files under `dir`, less `.git/` (what install copies).
fn tree_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let meta = entry.path().symlink_metadata().expect("meta");
        if meta.is_dir() && entry.file_name() != ".git" {
            total += tree_bytes(&entry.path());
        } else if !meta.is_dir() {
            total += meta.len();
        }
    }
    total
}
