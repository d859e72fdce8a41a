//! What install selects: the directory less `.git/`, `.kagedignore` and a
//! Rust package's `target/`; the command and the manifest always.

use super::*;

fn touch(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
    std::fs::write(p, body).expect("write");
}

fn selected(src: &Path, command: &[&str]) -> Selection {
    let command: Vec<String> = command.iter().map(|s| s.to_string()).collect();
    select(src, "p", &command).expect("selected")
}

fn names(paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(|p| p.display().to_string()).collect()
}

fn left_out(sel: &Selection) -> Vec<String> {
    sel.left_out.iter().map(ToString::to_string).collect()
}

#[test]
fn gitignored_files_ship_and_git_and_kagedignored_ones_stay_behind() {
    let src = tempfile::tempdir().expect("tempdir");
    let s = src.path();
    touch(s, "kaged-plugin.yaml", "name: p\n");
    touch(s, ".gitignore", "node_modules/\n*.log\n");
    touch(s, ".kagedignore", "*.log\n/docs/\n");
    touch(s, ".git/HEAD", "ref");
    touch(s, "node_modules/dep/index.js", "module.exports = 1");
    touch(s, "debug.log", "noise");
    touch(s, "docs/guide.md", "words");
    touch(s, "lib/docs/kept.md", "not top-level");
    touch(s, "lib/vendored/.git", "gitdir: elsewhere");
    touch(s, "target/data", "not a Rust package: kept");
    touch(s, "run.sh", "#!/bin/sh");
    let sel = selected(s, &["./run.sh"]);
    assert_eq!(
        names(&sel.files),
        [
            ".gitignore",
            ".kagedignore",
            "kaged-plugin.yaml",
            "lib/docs/kept.md",
            "node_modules/dep/index.js",
            "run.sh",
            "target/data",
        ]
    );
    assert_eq!(
        names(&sel.dirs),
        [
            "lib",
            "lib/docs",
            "lib/vendored",
            "node_modules",
            "node_modules/dep",
            "target"
        ]
    );
    assert_eq!(
        left_out(&sel),
        [
            "`.git/` (history, never copied)",
            "`debug.log` (.kagedignore: `*.log`)",
            "`docs/` (.kagedignore: `/docs/`)",
            "`lib/vendored/.git` (history, never copied)",
        ]
    );
}

#[test]
fn the_manifest_and_the_command_ship_whatever_kagedignore_says() {
    let src = tempfile::tempdir().expect("tempdir");
    let s = src.path();
    touch(s, "kaged-plugin.yaml", "name: p\n");
    touch(s, ".kagedignore", "*.yaml\nbin/\n*.sh\n");
    touch(s, "bin/plugin", "#!/bin/sh");
    touch(s, "bin/other", "left out");
    touch(s, "run.sh", "#!/bin/sh");
    let sel = selected(s, &["./bin/plugin", "run.sh"]);
    assert_eq!(
        names(&sel.files),
        [".kagedignore", "bin/plugin", "kaged-plugin.yaml", "run.sh"]
    );
    assert_eq!(names(&sel.dirs), ["bin"]);
}

#[test]
fn a_rust_package_leaves_its_target_behind_and_refuses_a_command_in_it() {
    let src = tempfile::tempdir().expect("tempdir");
    let s = src.path();
    touch(s, "kaged-plugin.yaml", "name: p\n");
    touch(s, "Cargo.toml", "[package]\n");
    touch(s, "target/release/p", "binary");
    touch(s, "src/target/data", "kept: not top-level");
    touch(s, "run.sh", "#!/bin/sh");
    let sel = selected(s, &["./run.sh"]);
    assert_eq!(
        names(&sel.files),
        [
            "Cargo.toml",
            "kaged-plugin.yaml",
            "run.sh",
            "src/target/data"
        ]
    );
    assert_eq!(
        left_out(&sel),
        ["`target/` (a Rust package's build output)"]
    );
    let err = select(s, "p", &["./target/release/p".into()])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("target/") && err.contains("cargo kaged pack"),
        "{err}"
    );
}

#[test]
fn links_stay_links_and_a_command_behind_a_linked_directory_is_not_taken() {
    let src = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    let s = src.path();
    touch(s, "kaged-plugin.yaml", "name: p\n");
    touch(outside.path(), "plugin", "#!/bin/sh");
    std::os::unix::fs::symlink(outside.path(), s.join("bin")).expect("link");
    let sel = selected(s, &["./bin/plugin"]);
    assert_eq!(names(&sel.files), ["bin", "kaged-plugin.yaml"]);
    assert!(sel.dirs.is_empty(), "{:?}", sel.dirs);

    // Copied, the link is a link and nothing lands outside the copy.
    let store = tempfile::tempdir().expect("tempdir");
    let copy = store.path().join("p");
    sel.copy(s, &copy).expect("copy");
    let link = copy.join("bin").symlink_metadata().expect("copied");
    assert!(link.file_type().is_symlink());
    let outside_files = std::fs::read_dir(outside.path()).expect("ls").count();
    assert_eq!(outside_files, 1, "only the original file is outside");
}

#[test]
fn a_fifo_is_left_out_instead_of_blocking_the_copy() {
    let src = tempfile::tempdir().expect("tempdir");
    let s = src.path();
    touch(s, "kaged-plugin.yaml", "name: p\n");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        s.join("pipe"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .expect("mkfifo");
    let sel = selected(s, &[]);
    assert_eq!(names(&sel.files), ["kaged-plugin.yaml"]);
    assert_eq!(left_out(&sel), ["`pipe` (not a file, directory or link)"]);
}
