//! What install selects: the directory less `.git/` and `.kagedignore`
//! (a Rust package's `target/` included, ADDENDUM §16); the command and
//! the manifest always; how large the copy is and how it is written.

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
fn a_rust_packages_target_ships_unless_kagedignore_leaves_it_out() {
    let src = tempfile::tempdir().expect("tempdir");
    let s = src.path();
    touch(s, "kaged-plugin.yaml", "name: p\n");
    touch(s, "Cargo.toml", "[package]\n");
    touch(s, "target/release/p", "binary");
    touch(s, "target/debug/big", "debug build");
    touch(s, "src/main.rs", "fn main() {}");
    let sel = selected(s, &["./target/release/p"]);
    assert_eq!(
        names(&sel.files),
        [
            "Cargo.toml",
            "kaged-plugin.yaml",
            "src/main.rs",
            "target/debug/big",
            "target/release/p"
        ]
    );
    assert!(sel.left_out.is_empty(), "{:?}", left_out(&sel));
    assert_eq!(
        sel.target_bytes,
        ("binary".len() + "debug build".len()) as u64
    );
    // `.kagedignore` leaves out the rest of `target/`; the command ships.
    touch(s, ".kagedignore", "/target/\n");
    let sel = selected(s, &["./target/release/p"]);
    assert!(names(&sel.files).contains(&"target/release/p".to_string()));
    assert!(!names(&sel.files).contains(&"target/debug/big".to_string()));
    assert_eq!(left_out(&sel), ["`target/` (.kagedignore: `/target/`)"]);
    // Only `.git/` is refused for a command.
    touch(s, ".git/hooks/run", "#!/bin/sh");
    let err = select(s, "p", &["./.git/hooks/run".into()])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("under .git/"), "{err}");
}

#[test]
fn a_large_copy_is_warned_about_naming_cargo_kaged_pack() {
    let src = tempfile::tempdir().expect("tempdir");
    let s = src.path();
    touch(s, "kaged-plugin.yaml", "name: p\n");
    touch(s, "Cargo.toml", "[package]\n");
    touch(s, "run.sh", "#!/bin/sh");
    assert_eq!(
        super::super::copy::large_copy_warning(&selected(s, &["./run.sh"])),
        None
    );
    // A sparse file: its length counts, no disk is used.
    let big = s.join("target/debug/deps.rlib");
    std::fs::create_dir_all(big.parent().expect("parent")).expect("mkdir");
    let f = std::fs::File::create(&big).expect("create");
    f.set_len(super::super::LARGE_COPY_BYTES + 1)
        .expect("set_len");
    let warning = super::super::copy::large_copy_warning(&selected(s, &["./run.sh"]))
        .expect("a large copy is warned about");
    assert!(
        warning.starts_with("install copies 256 MiB, 256 MiB of it under target/ (build output)")
            && warning.contains("`cargo kaged pack`"),
        "{warning}"
    );
}

#[test]
fn hard_links_share_the_files_and_bytes_copy_them() {
    use std::os::unix::fs::MetadataExt;
    let src = tempfile::tempdir().expect("tempdir");
    let s = src.path();
    touch(s, "kaged-plugin.yaml", "name: p\n");
    touch(s, "target/release/p", "binary");
    let sel = selected(s, &["./target/release/p"]);
    let out = tempfile::tempdir_in(s.parent().expect("parent")).expect("tempdir beside");
    let (linked, copied) = (out.path().join("linked"), out.path().join("copied"));
    sel.copy(s, &linked, super::super::CopyMode::HardLinks)
        .expect("link");
    sel.copy(s, &copied, super::super::CopyMode::Bytes)
        .expect("copy");
    let ino = |p: &Path| std::fs::metadata(p).expect("meta").ino();
    let rel = "target/release/p";
    assert_eq!(
        ino(&linked.join(rel)),
        ino(&s.join(rel)),
        "same file system: linked"
    );
    assert_ne!(ino(&copied.join(rel)), ino(&s.join(rel)));
    assert_eq!(std::fs::read(copied.join(rel)).expect("read"), b"binary");
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
    sel.copy(s, &copy, super::super::CopyMode::Bytes)
        .expect("copy");
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
