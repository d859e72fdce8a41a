//! What install copies (plugin-host.md install step 6, ADDENDUM §14): the
//! plugin directory less `.git/` and what `.kagedignore` names, so a
//! dependency directory version control ignores (`node_modules/`) ships
//! and the installed copy runs with it; a Rust package's packed layout
//! (`target/kaged/<name>/`) installs in place of the development directory.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use kaged_host_core::AuditLog;
use kaged_host_engine::PluginStore;
use serde_json::Value;

use crate::support::host::{assert_group_gone, fixture, host, EASY};

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, body).expect("write");
}

fn executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Every file and link under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(rel) = pending.pop() {
        for e in std::fs::read_dir(dir.join(&rel)).expect("ls") {
            let e = e.expect("entry");
            let rel = rel.join(e.file_name());
            if e.file_type().expect("type").is_dir() {
                pending.push(rel);
            } else {
                out.push(rel.display().to_string());
            }
        }
    }
    out.sort();
    out
}

fn host_sim() -> Command {
    let mut c = Command::cargo_bin("kaged-host-sim").expect("binary");
    c.env_remove("KAGED_HOME").args(["--cage", "off"]);
    c
}

/// Run; (exit code, stdout, stderr).
fn run(c: &mut Command) -> (Option<i32>, String, String) {
    let out = c.output().expect("run");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn plugin_install_ships_a_gitignored_dependency_dir_but_not_git_or_kagedignored_paths() {
    // The spec's shell adapter, whose `get_status` comes from a dependency
    // in `node_modules/`, which its `.gitignore` names.
    let src = tempfile::tempdir().expect("tempdir");
    let s = src.path();
    let adapter = fixture("shell-adapter");
    std::fs::copy(
        adapter.join("kaged-plugin.yaml"),
        s.join("kaged-plugin.yaml"),
    )
    .expect("copy");
    std::fs::copy(adapter.join("plugin.sh"), s.join("adapter.sh")).expect("copy");
    write(
        s,
        "plugin.sh",
        "#!/usr/bin/env bash\n\
         here=$(dirname \"$0\")\n\
         . \"$here/node_modules/status/lib.sh\" || exit 3\n\
         . \"$here/adapter.sh\"\n",
    );
    executable(&s.join("plugin.sh"));
    write(s, ".gitignore", "node_modules/\n");
    write(
        s,
        "node_modules/status/lib.sh",
        "get_status() { echo from-node-modules; }\n",
    );
    write(s, ".git/HEAD", "ref: refs/heads/main\n");
    write(s, ".git/objects/ab/cdef", "history");
    write(s, ".kagedignore", "# not for the store\n*.log\n/docs/\n");
    write(s, "debug.log", "noise\n");
    write(s, "docs/notes.md", "notes\n");
    write(s, "lib/debug.log", "noise at depth\n");

    let store = tempfile::tempdir().expect("tempdir");
    let (code, out, err) = run(host_sim()
        .args(["plugin", "install"])
        .arg(s)
        .arg("--store")
        .arg(store.path())
        .arg("--yes"));
    assert_eq!(code, Some(0), "{out}\n{err}");
    let copy = store.path().join("plugins").join("my-simple-adapter");
    assert_eq!(
        tree(&copy),
        [
            ".gitignore",
            ".kagedignore",
            "adapter.sh",
            "kaged-plugin.yaml",
            "node_modules/status/lib.sh",
            "plugin.sh",
        ]
    );
    assert!(out.contains("(6 files,"), "{out}");

    // The copy runs, with what it took from node_modules/.
    let (code, out, err) =
        run(host_sim()
            .arg("call")
            .arg(&copy)
            .args(["status.get", "--force", "--json"]));
    assert_eq!(code, Some(0), "{err}");
    let answer: Value = serde_json::from_str(out.trim()).expect("json");
    assert_eq!(answer["status"], "from-node-modules");
}

#[tokio::test]
async fn a_packed_layout_installs_in_place_of_the_development_directory() {
    // A Rust package whose own directory would install (its command is a
    // script beside the manifest) ...
    let dev = tempfile::tempdir().expect("tempdir");
    let d = dev.path();
    let adapter = fixture("shell-adapter");
    let manifest = std::fs::read_to_string(adapter.join("kaged-plugin.yaml")).expect("manifest");
    write(d, "Cargo.toml", "[package]\nname = \"my-simple-adapter\"\n");
    write(d, "src/main.rs", "fn main() {}\n");
    write(d, ".git/HEAD", "ref: refs/heads/main\n");
    write(
        d,
        "kaged-plugin.yaml",
        &manifest
            .replace("version: 0.1.0", "version: 0.0.9")
            .replace("./plugin.sh", "./dev.sh"),
    );
    write(d, "dev.sh", "#!/bin/sh\nexit 3\n");
    executable(&d.join("dev.sh"));
    write(d, "target/release/my-simple-adapter", "build output");
    let store_root = tempfile::tempdir().expect("tempdir");
    let store = PluginStore::open(store_root.path(), AuditLog::memory()).expect("store");
    let plan = store.plan(d).expect("the development directory installs");
    assert_eq!((plan.source.as_path(), plan.version.as_str()), (d, "0.0.9"));

    // ... until `cargo kaged pack` has written its packed layout (in
    // cargo's target directory: `target/kaged/<name>` unless
    // CARGO_TARGET_DIR moves it): that installs instead, and nothing of
    // the development directory ships.
    let packed = kaged_host_engine::package_packed_dir(d, "my-simple-adapter");
    let _outside = RemoveOnDrop(Some(packed.clone()).filter(|p| !p.starts_with(d)));
    std::fs::create_dir_all(&packed).expect("mkdir");
    for f in ["kaged-plugin.yaml", "plugin.sh"] {
        std::fs::copy(adapter.join(f), packed.join(f)).expect("copy");
    }
    let plan = store.plan(d).expect("plan");
    assert_eq!(
        (plan.source.as_path(), plan.version.as_str()),
        (packed.as_path(), "0.1.0")
    );
    let entry = store.install(d, |_| true).expect("install");
    assert_eq!(entry.installed, "0.1.0");
    let copy = store.plugin_dir("my-simple-adapter");
    assert_eq!(tree(&copy), ["kaged-plugin.yaml", "plugin.sh"]);

    // The copy is the packed plugin, and it answers.
    let (host, _, _) = host(EASY);
    let plugin = host.launch(&copy).await.expect("launch the installed copy");
    plugin.ping().await.expect("ping");
    let pid = plugin.pid().expect("pid");
    plugin.shutdown().await;
    assert_group_gone(pid);
}

/// Removes a directory created outside a test's temporary directory.
struct RemoveOnDrop(Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(dir) = &self.0 {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
