//! Part 1 of `docs/authoring.md` ("the first hour"), run as written: every
//! `<!-- guide: run -->` shell block is run, every `<!-- guide: file PATH -->`
//! block written to PATH and every `<!-- guide: add-to [TABLE] PATH -->`
//! block added to that TOML table of PATH, in the page's order, in a temporary directory outside
//! the workspace, with the kit's command-line tools on `PATH`. So the guide
//! cannot rot: a step that no longer works fails here, naming the step.
//!
//! The changes from what an author types: the kit's crates come from this
//! checkout instead of crates.io (`cargo kaged new … --kit-path`, and a kit
//! crate's `"0.1"` or `version = "0.1"` in an added block becomes a path); the package reuses
//! this workspace's compiled dependencies (this workspace's `Cargo.lock`,
//! and a `.cargo/config.toml` above it: [`support::outside_config`]; its
//! own `target/` still holds its
//! binary, as the guide's manifest expects); and `cargo kaged pack` packs
//! the `dev` build (`--profile dev`), since a release build would compile
//! every dependency again to test nothing the guide says. The tools on
//! `PATH` are this workspace's own builds ([`support::tools`]).

mod support;

use std::path::Path;
use std::process::Command;

use kaged_test_support::command::{assert_success, outside_the_kit};

use support::{kit, link_tools, outside_config, seed_lock};

/// The kit crates an added block may name, with their folder.
const KIT_CRATES: [(&str, &str); 5] = [
    ("kaged-plugin-sdk", "kaged-plugin-sdk"),
    ("kaged-host-sim", "kaged-host-sim"),
    ("kaged-host-core", "kaged-host-sim/core"),
    ("kaged-host-storage", "kaged-host-sim/storage"),
    ("kaged-conformance", "conformance"),
];

/// One step of the guide.
#[derive(Debug)]
enum Step {
    Run(String),
    File(String, String),
    /// Lines added at the top of a TOML table: `[table]`, path, lines.
    AddTo(String, String, String),
}

/// The steps of Part 1, in order.
fn steps(guide: &str) -> Vec<Step> {
    let part1 = guide
        .split("# Part 2")
        .next()
        .expect("the guide has a Part 2 heading");
    let mut out = Vec::new();
    let mut lines = part1.lines();
    while let Some(line) = lines.next() {
        let Some(tag) = line
            .trim()
            .strip_prefix("<!-- guide: ")
            .and_then(|t| t.strip_suffix(" -->"))
        else {
            continue;
        };
        let fence = lines.next().expect("a fenced block after the tag");
        assert!(
            fence.starts_with("```"),
            "{tag}: no fenced block after the tag"
        );
        let body: String = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .map(|l| format!("{l}\n"))
            .collect();
        let step = match tag.split_once(' ') {
            None if tag == "run" => Step::Run(body),
            Some(("file", path)) => Step::File(path.to_string(), body),
            Some(("add-to", rest)) => {
                let (table, path) = rest.split_once(' ').expect("add-to [TABLE] PATH");
                Step::AddTo(table.to_string(), path.to_string(), body)
            }
            _ => panic!("unknown guide tag {tag:?}"),
        };
        out.push(step);
    }
    out
}

/// `text` with the kit's crates as path dependencies on this checkout.
fn kit_paths(text: &str) -> String {
    let mut text = text.to_string();
    for (krate, folder) in KIT_CRATES {
        let path = serde_json::Value::from(kit().join(folder).display().to_string());
        text = text
            .replace(
                &format!("{krate} = \"0.1\""),
                &format!("{krate} = {{ path = {path} }}"),
            )
            .replace(
                &format!("{krate} = {{ version = \"0.1\""),
                &format!("{krate} = {{ path = {path}"),
            );
    }
    text
}

/// The bytes of the files under `dir`.
fn du(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .expect("a directory")
        .map(|e| {
            let e = e.expect("an entry");
            let meta = e.path().symlink_metadata().expect("metadata");
            if meta.is_dir() {
                du(&e.path())
            } else {
                meta.len()
            }
        })
        .sum()
}

#[test]
fn the_first_hour_runs_as_written() {
    if !kaged_host_core::testing::cage_available_for_blocking("the authoring guide") {
        return;
    }
    let guide = std::fs::read_to_string(kit().join("docs/authoring.md")).expect("the guide");
    let steps = steps(&guide);
    assert!(steps.len() >= 8, "the guide's steps: {steps:?}");
    assert!(
        steps
            .iter()
            .any(|s| matches!(s, Step::Run(script) if script.contains("cargo kaged pack\n"))),
        "the guide packs with `cargo kaged pack` (this test packs the dev build instead)"
    );
    let place = tempfile::tempdir().expect("tempdir");
    outside_config(place.path());
    let bin = place.path().join("bin");
    link_tools(&bin);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Until `cargo kaged new` made it, steps run where it is run.
    let package = place.path().join("notes");
    for step in &steps {
        let cwd = if package.is_dir() {
            package.as_path()
        } else {
            place.path()
        };
        match step {
            Step::File(rel, body) => {
                let p = package.join(rel);
                std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
                std::fs::write(&p, body).expect("write a guide file");
            }
            Step::AddTo(table, rel, body) => {
                let p = package.join(rel);
                let text = std::fs::read_to_string(&p).expect("the file to add to");
                let header = format!("{table}\n");
                let at = text
                    .find(&header)
                    .unwrap_or_else(|| panic!("{rel} has no {table} table:\n{text}"))
                    + header.len();
                let text = format!("{}{}{}", &text[..at], kit_paths(body), &text[at..]);
                std::fs::write(&p, text).expect("add a guide block");
            }
            Step::Run(script) => {
                let script = script
                    .replace(
                        "cargo kaged new notes",
                        &format!("cargo kaged new notes --kit-path {}", kit().display()),
                    )
                    .replace("cargo kaged pack\n", "cargo kaged pack --profile dev\n");
                let out = outside_the_kit(&mut Command::new("bash"))
                    .args(["-euo", "pipefail", "-c", &format!("set -x\n{script}")])
                    .current_dir(cwd)
                    .env("PATH", &path)
                    .env_remove("CARGO_TARGET_DIR")
                    .env_remove("KAGED_HOME")
                    .output()
                    .expect("bash");
                assert_success(format_args!("the guide's step\n{script}\n"), &out);
                seed_lock(&package);
            }
        }
    }
    // The end state the guide promises: installed (only what the plugin
    // needs: its binary and files of a few KiB, no `.git/` or `target/`),
    // enabled, certified.
    let copy = package.join("store/plugins/notes");
    let binary = copy.join("bin/notes");
    assert!(binary.is_file(), "the installed copy");
    let size = du(&copy);
    let binary_size = binary.metadata().expect("the binary").len();
    assert!(
        size < binary_size + 1024 * 1024,
        "the installed copy holds {size} bytes, its binary {binary_size}"
    );
    for never in [".git", "target"] {
        assert!(!copy.join(never).exists(), "{never} was installed");
    }
    let config = std::fs::read_to_string(package.join("store/config.toml")).expect("config");
    assert!(config.contains("enabled = true"), "{config}");
    // The outcomes the guide promises, beyond exit statuses.
    let host_sim = |args: &[&str]| {
        let out = Command::new(bin.join("kaged-host-sim"))
            .args(args)
            .current_dir(&package)
            .env("PATH", &path)
            .output()
            .expect("kaged-host-sim runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // "Each `call` starts a fresh plugin with a fresh temporary database
    // (so `notes.count` answers 0)", even after a note was remembered.
    let (code, answer, err) = host_sim(&["call", "store/plugins/notes", "notes.count", "--json"]);
    assert_eq!((code, answer.as_str()), (Some(0), "0"), "{err}");
    // "a disabled copy is not started (`call` refuses it without `--force`)".
    let (code, _, err) = host_sim(&["plugin", "disable", "notes", "--store", "store"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, answer, err) = host_sim(&["call", "store/plugins/notes", "notes.count"]);
    assert_ne!(code, Some(0), "a disabled copy was called: {answer}");
    assert!(err.contains("disabled") && err.contains("--force"), "{err}");
    let (code, answer, err) = host_sim(&[
        "call",
        "store/plugins/notes",
        "notes.count",
        "--force",
        "--json",
    ]);
    assert_eq!((code, answer.as_str()), (Some(0), "0"), "{err}");
}
