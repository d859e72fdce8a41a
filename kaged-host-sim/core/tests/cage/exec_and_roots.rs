//! `exec:BIN:P`, the command outside the plugin directory, and the
//! `config:/` and `project:/` roots.

use std::path::{Path, PathBuf};

use kaged_host_core::cage::{Access, CageError};

use crate::model::{argv, compile, compile_in, has_bind, inputs};

fn p(s: &str) -> &Path {
    Path::new(s)
}

#[test]
fn exec_binds_its_workdir_rw_and_finds_a_bare_binary_on_path() {
    let policy = compile(&["exec:bash:/opt/data/sub"]).unwrap();
    let a = argv(&policy);
    assert!(has_bind(&a, "--bind", "/opt/data/sub", "/opt/data/sub"));
    let g = &policy.exec[0];
    assert_eq!(g.binary, "bash");
    assert_eq!(g.binary_path.as_deref(), Some(p("/usr/bin/bash")));
    assert_eq!(g.workdir, PathBuf::from("/opt/data/sub"));
    // /usr/bin/bash is already visible: no bind of its own.
    assert!(!crate::model::binds(&a)
        .iter()
        .any(|b| b.2 == p("/usr/bin/bash")));
    assert!(policy
        .notes
        .iter()
        .any(|n| n.contains("cannot hold a binary")));
}

#[test]
fn exec_of_a_binary_outside_the_system_binds_it_read_only() {
    let policy = compile(&["exec:/opt/tools/bin/tool:/opt/data"]).unwrap();
    let a = argv(&policy);
    assert!(has_bind(
        &a,
        "--ro-bind",
        "/opt/tools/bin/tool",
        "/opt/tools/bin/tool"
    ));
    assert_eq!(policy.access(p("/opt/tools/bin/tool")), Access::ReadOnly);
    assert_eq!(policy.access(p("/opt/tools/bin")), Access::Hidden);
}

#[test]
fn exec_of_a_symlinked_binary_that_leaves_is_refused() {
    let err = compile(&["exec:/opt/tools/bin/alias:/opt/data"]).unwrap_err();
    assert!(matches!(err, CageError::Escapes { .. }), "{err}");
    assert!(err
        .to_string()
        .contains("exec:/opt/tools/bin/alias:/opt/data"));
}

#[test]
fn exec_of_a_missing_binary_binds_nothing_and_says_so() {
    let policy = compile(&["exec:nosuch:/opt/data"]).unwrap();
    assert_eq!(policy.exec[0].binary_path, None);
    assert!(policy
        .notes
        .iter()
        .any(|n| n.contains("`nosuch` was not found")));
}

#[test]
fn a_command_outside_every_bind_is_bound_read_only() {
    let mut i = inputs();
    i.command = Some("/work/target/debug/echo".into());
    let a = argv(&compile_in(&[], &i).unwrap());
    assert!(has_bind(
        &a,
        "--ro-bind",
        "/work/target/debug/echo",
        "/work/target/debug/echo"
    ));
    // A system interpreter needs nothing.
    i.command = Some("/usr/bin/python3".into());
    let policy = compile_in(&[], &i).unwrap();
    assert_eq!(policy.mounts, compile(&[]).unwrap().mounts);
}

#[test]
fn config_and_project_paths_resolve_against_their_roots() {
    let mut i = inputs();
    i.config_root = Some("/home/op/.config/kaged".into());
    i.project_root = Some("/srv/project".into());
    let policy = compile_in(
        &[
            "read:fs:config:/memory",
            "write:fs:config:/memory",
            "read:fs:project:/out",
        ],
        &i,
    )
    .unwrap();
    let a = argv(&policy);
    assert!(has_bind(
        &a,
        "--bind",
        "/home/op/.config/kaged/memory",
        "/home/op/.config/kaged/memory"
    ));
    assert!(has_bind(
        &a,
        "--ro-bind-try",
        "/srv/project/out",
        "/srv/project/out"
    ));
}

#[test]
fn a_uri_path_without_its_root_or_with_dotdot_is_refused() {
    let err = compile(&["read:fs:config:/memory"]).unwrap_err();
    assert!(
        matches!(
            err,
            CageError::NoRoot {
                prefix: "config:/",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("read:fs:config:/memory"));
    let err = compile(&["write:fs:project:/x"]).unwrap_err();
    assert!(
        matches!(
            err,
            CageError::NoRoot {
                prefix: "project:/",
                ..
            }
        ),
        "{err}"
    );
    let mut i = inputs();
    i.config_root = Some("/home/op/.config/kaged".into());
    let err = compile_in(&["read:fs:config:/../../../etc"], &i).unwrap_err();
    assert!(matches!(err, CageError::BadCapability { .. }), "{err}");
}

/// ADDENDUM §16: `exec:BIN:P`'s binary is looked up on the host's spawn
/// `PATH`, never the manifest's `env` (which could point it at `/root` and
/// bind `/root/.bashrc`), and must be one executable file.
#[test]
fn exec_ignores_the_manifests_path_and_binds_one_executable_file_only() {
    let fs = crate::model::host()
        .data_file("/root/.bashrc")
        .file("/root/tool")
        .data_file("/usr/bin/data")
        .dir("/usr/bin/adir");
    let mut inputs = inputs();
    inputs
        .env
        .insert("PATH".to_string(), "/root:/usr/bin".to_string());
    let compile_on = |caps: &[&str]| {
        kaged_host_core::cage::compile_with(&crate::model::manifest(caps), &inputs, &fs)
    };
    // `tool` is in /root (the manifest's PATH), not on the spawn PATH.
    let policy = compile_on(&["exec:tool:/opt/data"]).unwrap();
    assert_eq!(policy.exec[0].binary_path, None);
    assert!(!crate::model::binds(&argv(&policy))
        .iter()
        .any(|b| b.1.starts_with("/root")));
    // A data file, by name or absolute, and a directory, are refused.
    for (cap, why) in [
        ("exec:.bashrc:/opt/data", None),
        ("exec:/root/.bashrc:/opt/data", Some("is not executable")),
        ("exec:data:/opt/data", Some("is not executable")),
        ("exec:/usr/bin/adir:/opt/data", Some("is a directory")),
        ("exec:/root:/opt/data", Some("is a directory")),
    ] {
        match (compile_on(&[cap]), why) {
            (Ok(policy), None) => assert_eq!(policy.exec[0].binary_path, None, "{cap}"),
            (Err(e @ CageError::ExecNotExecutable { .. }), Some(why)) => {
                assert!(e.to_string().contains(why), "{cap}: {e}");
                assert!(e.to_string().contains(cap), "{cap}: {e}");
            }
            (other, _) => panic!("{cap}: {other:?}"),
        }
    }
}
