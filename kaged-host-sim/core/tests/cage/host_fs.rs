//! The compiler on the real filesystem: a temporary tree with real
//! symlinks (absolute, relative, dangling).

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use kaged_host_core::cage::{compile, resolve, CageError, CageInputs, FsView, HostFs, Node};

use crate::model::manifest;

struct Tree {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

fn tree() -> Tree {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(tmp.path()).expect("canonical");
    for d in ["plugin", "data/sub"] {
        std::fs::create_dir_all(root.join(d)).expect("mkdir");
    }
    std::fs::write(root.join("data/file"), "x").expect("write");
    symlink("/etc", root.join("to-etc")).expect("symlink");
    symlink("data", root.join("rel")).expect("symlink");
    symlink(root.join("nowhere"), root.join("dangling")).expect("symlink");
    Tree { _tmp: tmp, root }
}

fn inputs(t: &Tree) -> CageInputs {
    CageInputs::new(t.root.join("plugin"), crate::model::env())
}

fn cap(kind: &str, path: &Path) -> String {
    format!("{kind}:fs:{}", path.display())
}

#[test]
fn resolution_agrees_with_the_kernel_for_existing_paths() {
    let t = tree();
    for rel in ["rel/file", "rel/sub/../file", "data/./sub", "to-etc"] {
        let path = t.root.join(rel);
        let ours = resolve(&HostFs, &path).expect("resolve");
        assert!(ours.exists, "{rel}");
        assert_eq!(
            ours.path,
            std::fs::canonicalize(&path).expect("canonicalize"),
            "{rel}"
        );
    }
    assert_eq!(
        HostFs.lstat(&t.root.join("dangling")).unwrap(),
        Node::Symlink(t.root.join("nowhere"))
    );
    let r = resolve(&HostFs, &t.root.join("dangling/x")).unwrap();
    assert!(!r.exists);
    assert_eq!(r.path, t.root.join("nowhere/x"));
}

#[test]
fn real_grants_compile_to_binds() {
    let t = tree();
    let data = t.root.join("data");
    let caps = [cap("read", &data), cap("write", &data.join("sub"))];
    let caps: Vec<&str> = caps.iter().map(String::as_str).collect();
    let policy = compile(&manifest(&caps), &inputs(&t)).expect("compile");
    let a = crate::model::argv(&policy);
    let d = data.display().to_string();
    let s = data.join("sub").display().to_string();
    assert!(crate::model::has_bind(&a, "--ro-bind", &d, &d));
    assert!(crate::model::has_bind(&a, "--bind", &s, &s));
    // The install directory under /tmp comes after the tmpfs on /tmp.
    let opts = crate::model::options(&a);
    let tmpfs = opts.iter().position(|o| o[0] == "--tmpfs").unwrap();
    let plugin = t.root.join("plugin").display().to_string();
    let bind = opts
        .iter()
        .position(|o| o.len() == 3 && o[2] == plugin)
        .unwrap();
    assert!(tmpfs < bind);
}

#[test]
fn real_symlinks_that_leave_the_grant_are_refused() {
    let t = tree();
    for (rel, resolved) in [
        ("to-etc", PathBuf::from("/etc")),
        ("rel", t.root.join("data")),
        ("to-etc/new", PathBuf::from("/etc/new")),
        ("dangling", t.root.join("nowhere")),
    ] {
        let c = cap("read", &t.root.join(rel));
        let err = compile(&manifest(&[&c]), &inputs(&t)).unwrap_err();
        match &err {
            CageError::Escapes { resolved: r, .. } => assert_eq!(r, &resolved, "{rel}"),
            other => panic!("{rel}: {other}"),
        }
        assert!(err.to_string().starts_with(&format!("`{c}`")), "{err}");
    }
}
