//! Bad input to `cargo kaged` is one line on stderr naming what was wrong,
//! exit status 2, and nothing written.

use std::process::Command;

fn cargo_kaged(cwd: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-kaged"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run cargo-kaged");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_names_occupied_dirs_and_unknown_packages_are_one_line_errors() {
    let place = tempfile::tempdir().expect("tempdir");
    let kit = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    std::fs::create_dir(place.path().join("taken")).expect("mkdir");
    std::fs::write(place.path().join("taken/mine.txt"), "mine").expect("write");
    for (args, needle) in [
        (
            vec!["kaged", "new", "Bad_Name"],
            "plugin name `Bad_Name` must match",
        ),
        (vec!["new", "x"], "is too short"),
        (vec!["new", "file"], "built-in tool namespace"),
        (
            vec!["new", "taken"],
            "taken already exists and is not empty",
        ),
        (
            vec!["new", "fine", "--kit-path", "/no/such/kit"],
            "/no/such/kit",
        ),
        (
            vec![
                "new",
                "fine",
                "--kit-path",
                place.path().to_str().expect("utf-8"),
            ],
            "is not a checkout of the kaged plugin kit",
        ),
    ] {
        let (code, err) = cargo_kaged(place.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains(needle),
            "{args:?}: {needle:?} missing from {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("cargo-kaged: error: "), "{args:?}: {err}");
    }
    assert!(!place.path().join("fine").exists(), "nothing was created");
    assert!(place.path().join("taken/mine.txt").is_file());

    let (code, err) = cargo_kaged(
        std::path::Path::new(kit),
        &["kaged", "pack", "-p", "no-such-package"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("no package `no-such-package` in this workspace")
            && err.contains("kaged-example-echo"),
        "{err}"
    );
}

#[test]
fn help_names_the_three_subcommands() {
    let (code, _) = cargo_kaged(std::env::temp_dir().as_path(), &["kaged", "--help"]);
    assert_eq!(code, Some(0));
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-kaged"))
        .args(["kaged", "--help"])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    for sub in ["new", "pack", "test"] {
        assert!(text.contains(sub), "{sub} missing from\n{text}");
    }
}
