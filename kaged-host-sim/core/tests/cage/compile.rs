//! The compiler, one capability form at a time, on the in-memory host.

use std::path::{Path, PathBuf};

use kaged_host_core::cage::{Access, CageError, Mode, Mount, NetMode, NET_FILTERED, NET_SHARED};

use crate::model::{argv, compile, has_bind, options, INSTALL};

fn p(s: &str) -> &Path {
    Path::new(s)
}

#[test]
fn the_base_is_the_system_runtime_and_a_few_etc_files() {
    let policy = compile(&[]).unwrap();
    let a = argv(&policy);
    assert!(has_bind(&a, "--ro-bind", "/usr", "/usr"));
    for (link, target) in [
        ("/bin", "usr/bin"),
        ("/lib", "usr/lib"),
        ("/lib64", "usr/lib64"),
    ] {
        assert!(policy.mounts.contains(&Mount::Symlink {
            target: target.into(),
            dest: link.into()
        }));
    }
    for f in ["/etc/ld.so.cache", "/etc/nsswitch.conf", "/etc/hosts"] {
        assert!(has_bind(&a, "--ro-bind", f, f), "{f}");
    }
    // The time zone's content is bound, not the host's symlink.
    assert!(has_bind(
        &a,
        "--ro-bind",
        "/usr/share/zoneinfo/Etc/UTC",
        "/etc/localtime"
    ));
    assert_eq!(policy.access(p("/etc/passwd")), Access::Hidden);
    assert_eq!(policy.access(p("/etc/ssl/private")), Access::Hidden);
    assert_eq!(policy.access(p("/etc/resolv.conf")), Access::Hidden);
    assert_eq!(policy.access(p("/srv/secret")), Access::Hidden);
    assert_eq!(policy.access(p("/bin/bash")), Access::ReadOnly);
    assert_eq!(policy.access(p("/tmp/x")), Access::Scratch);
    assert_eq!(policy.access(p("/proc/self")), Access::Kernel);
    // The install directory: read-only, the working directory; HOME is it.
    assert!(has_bind(&a, "--ro-bind", INSTALL, INSTALL));
    assert_eq!(policy.access(p(INSTALL)), Access::ReadOnly);
    assert_eq!(policy.chdir, PathBuf::from(INSTALL));
    assert_eq!(policy.env["HOME"], INSTALL);
    assert_eq!(policy.state, "ephemeral");
    assert_eq!(policy.seccomp.profile, "default");
}

#[test]
fn the_argv_starts_with_the_namespaces_and_ends_with_the_command() {
    let a = argv(&compile(&["net:[]"]).unwrap());
    let head: Vec<&str> = a.iter().take(8).map(String::as_str).collect();
    assert_eq!(
        head,
        [
            "--unshare-all",
            "--unshare-pid",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--clearenv",
            "--setenv"
        ]
    );
    // Not `--as-pid-1`: the plugin must see SIGTERM (plugin::caged).
    assert!(!a.iter().any(|x| x == "--as-pid-1"));
    let opts = options(&a);
    let tail: Vec<Vec<String>> = opts[opts.len() - 3..].to_vec();
    assert_eq!(tail[0], ["--chdir", INSTALL]);
    assert_eq!(tail[1], ["--info-fd", "<info-fd>"]);
    assert_eq!(tail[2], ["--seccomp", "<seccomp-fd>"]);
    let dash = a.iter().position(|x| x == "--").unwrap();
    assert_eq!(
        a[dash + 1..],
        [format!("{INSTALL}/plugin.py"), "--flag".into()]
    );
    // The environment, sorted, after --clearenv.
    let envs: Vec<&Vec<String>> = opts.iter().filter(|o| o[0] == "--setenv").collect();
    assert_eq!(envs.len(), 4);
    assert!(envs.windows(2).all(|w| w[0][1] < w[1][1]));
}

#[test]
fn no_network_unless_a_net_grant() {
    for caps in [&[][..], &["net:[]"][..], &["kaged:storage:read"][..]] {
        let policy = compile(caps).unwrap();
        assert_eq!(policy.net.mode, NetMode::None, "{caps:?}");
        assert!(!argv(&policy).contains(&"--share-net".to_string()));
        assert_eq!(policy.net.filtering, None);
    }
}

#[test]
fn a_host_port_grant_filters_the_network_with_a_hosts_file_and_no_resolver() {
    let policy = compile(&[
        "net:b.example:443",
        "net:localhost:*",
        "net:api.example.com:443",
        "net:[::1]:80",
    ])
    .unwrap();
    assert_eq!(policy.net.mode, NetMode::Filtered);
    assert_eq!(
        policy.net.grants,
        [
            "[::1]:80",
            "api.example.com:443",
            "b.example:443",
            "localhost:*"
        ]
    );
    assert_eq!(policy.net.filtering.as_deref(), Some(NET_FILTERED));
    // Names get stand-ins in grant order; addresses and localhost none.
    let table: Vec<(String, String)> = policy
        .net
        .stand_ins
        .iter()
        .map(|s| (s.host.clone(), s.address.to_string()))
        .collect();
    assert_eq!(
        table,
        [
            ("api.example.com".to_string(), "198.18.0.1".to_string()),
            ("b.example".to_string(), "198.18.0.2".to_string())
        ]
    );
    let a = argv(&policy);
    assert!(!a.contains(&"--share-net".to_string()), "{a:?}");
    // The generated hosts file instead of the host's; no resolver; the CA store.
    assert!(options(&a).contains(&vec![
        "--ro-bind-data".to_string(),
        "<fd:hosts-file>".to_string(),
        "/etc/hosts".to_string()
    ]));
    assert!(!has_bind(&a, "--ro-bind", "/etc/hosts", "/etc/hosts"));
    assert!(!a.iter().any(|x| x == "/etc/resolv.conf"), "{a:?}");
    assert!(has_bind(
        &a,
        "--ro-bind",
        "/etc/ssl/certs",
        "/etc/ssl/certs"
    ));
    assert_eq!(policy.access(p("/etc/hosts")), Access::ReadOnly);
    assert_eq!(policy.access(p("/etc/ssl/private")), Access::Hidden);
    let text = policy.render();
    assert!(
        text.contains("network: filtered, granted [::1]:80"),
        "{text}"
    );
    assert!(
        text.contains("stand-in 198.18.0.1 for api.example.com"),
        "{text}"
    );
    let json = serde_json::to_value(&policy).unwrap();
    assert_eq!(json["net"]["stand_ins"][1]["address"], "198.18.0.2");
}

#[test]
fn net_star_shares_the_network_with_the_resolver() {
    let policy = compile(&["net:*", "net:api.example.com:443"]).unwrap();
    assert_eq!(policy.net.mode, NetMode::Shared);
    assert_eq!(policy.net.filtering.as_deref(), Some(NET_SHARED));
    assert!(policy.net.stand_ins.is_empty());
    let a = argv(&policy);
    assert_eq!(a.iter().filter(|x| *x == "--share-net").count(), 1);
    // With the network come the resolver (its content) and the CA store.
    assert!(has_bind(
        &a,
        "--ro-bind",
        "/run/systemd/resolve/stub-resolv.conf",
        "/etc/resolv.conf"
    ));
    assert!(has_bind(&a, "--ro-bind", "/etc/hosts", "/etc/hosts"));
    assert!(has_bind(
        &a,
        "--ro-bind",
        "/etc/ssl/certs",
        "/etc/ssl/certs"
    ));
}

#[test]
fn read_and_write_grants_are_ro_and_rw_binds() {
    let policy = compile(&["read:fs:/opt/data", "write:fs:/srv/secret"]).unwrap();
    let a = argv(&policy);
    assert!(has_bind(&a, "--ro-bind", "/opt/data", "/opt/data"));
    assert!(has_bind(&a, "--bind", "/srv/secret", "/srv/secret"));
    assert_eq!(policy.access(p("/opt/data/file")), Access::ReadOnly);
    assert_eq!(policy.access(p("/srv/secret/x")), Access::ReadWrite);
}

#[test]
fn a_missing_path_is_bound_with_try_and_noted() {
    let policy = compile(&["write:fs:/var/lib/demo", "read:fs:/opt/data/later"]).unwrap();
    let a = argv(&policy);
    assert!(has_bind(&a, "--bind-try", "/var/lib/demo", "/var/lib/demo"));
    assert!(has_bind(
        &a,
        "--ro-bind-try",
        "/opt/data/later",
        "/opt/data/later"
    ));
    let notes = policy.notes.join("\n");
    assert!(
        notes.contains("/var/lib/demo (write:fs:/var/lib/demo) does not exist now"),
        "{notes}"
    );
    // Absent at compile time: not claimed as visible.
    assert_eq!(policy.access(p("/var/lib/demo")), Access::Hidden);
}

#[test]
fn a_rw_bind_nested_in_a_ro_bind_comes_after_it_and_a_grant_in_a_rw_one_is_refused() {
    let policy = compile(&["write:fs:/opt/data/sub", "read:fs:/opt/data"]).unwrap();
    let b = crate::model::binds(&argv(&policy));
    let ro = b.iter().position(|(_, _, d)| d == p("/opt/data")).unwrap();
    let rw = b
        .iter()
        .position(|(_, _, d)| d == p("/opt/data/sub"))
        .unwrap();
    assert!(ro < rw);
    assert_eq!(policy.access(p("/opt/data/sub/x")), Access::ReadWrite);
    assert_eq!(policy.access(p("/opt/data/file")), Access::ReadOnly);

    // ADDENDUM §16: a grant inside a writable grant is refused, whatever
    // its mode, existing or not, and whatever the order.
    for caps in [
        ["read:fs:/opt/data/sub", "write:fs:/opt/data"],
        ["write:fs:/opt/data", "write:fs:/opt/data/sub"],
        ["exec:bash:/opt/data", "read:fs:/opt/data/missing"],
    ] {
        let e = compile(&caps).unwrap_err();
        let CageError::NestedInWritable {
            inner_path,
            outer_path,
            ..
        } = &e
        else {
            panic!("{caps:?}: {e}")
        };
        assert!(inner_path.starts_with(outer_path) && inner_path != outer_path);
        assert!(
            e.to_string().contains("lies inside the writable grant"),
            "{e}"
        );
    }
}

#[test]
fn the_install_dir_inside_a_writable_grant_is_refused() {
    let e = compile(&["write:fs:/opt/plugins"]).unwrap_err();
    assert!(
        matches!(&e, CageError::NestedInWritable { inner, .. } if inner == "install dir"),
        "{e}"
    );
}

#[test]
fn every_bind_is_by_descriptor_and_a_missing_source_is_left_out() {
    let policy = compile(&["read:fs:/opt/data", "write:fs:/var/lib/demo"]).unwrap();
    let a = crate::model::argv_with_fds(&policy, |s| s != p("/var/lib/demo"));
    let opts = options(&a);
    // No bind by path but the cage's own /proc views over themselves.
    for o in &opts {
        if o[0] == "--ro-bind" {
            assert!(o[1] == o[2] && o[1].starts_with("/proc"), "{o:?}");
        }
        assert!(o[0] != "--bind" && !o[0].ends_with("-try"), "{o:?}");
    }
    let fds: Vec<&Vec<String>> = opts.iter().filter(|o| o[0].ends_with("bind-fd")).collect();
    // Numbered from 6 in mount order, each once.
    let numbers: Vec<i32> = fds.iter().map(|o| o[1].parse().unwrap()).collect();
    assert_eq!(numbers, (6..6 + numbers.len() as i32).collect::<Vec<_>>());
    assert!(fds
        .iter()
        .any(|o| o[0] == "--ro-bind-fd" && o[2] == "/opt/data"));
    assert!(fds
        .iter()
        .any(|o| o[0] == "--ro-bind-fd" && o[2] == INSTALL));
    // The missing source is not bound at all.
    assert!(!a.iter().any(|x| x == "/var/lib/demo"), "{a:?}");
}

#[test]
fn duplicates_collapse_and_rw_wins() {
    let policy = compile(&[
        "read:fs:/opt/data",
        "write:fs:/opt/data/",
        "read:fs:/opt/./data",
    ])
    .unwrap();
    let binds: Vec<&Mount> = policy
        .mounts
        .iter()
        .filter(|m| m.dest() == p("/opt/data"))
        .collect();
    assert_eq!(binds.len(), 1);
    let Mount::Bind { mode, because, .. } = binds[0] else {
        panic!("{binds:?}")
    };
    assert_eq!(*mode, Mode::Rw);
    assert_eq!(
        because,
        &[
            "read:fs:/opt/data",
            "write:fs:/opt/data/",
            "read:fs:/opt/./data"
        ]
    );
}

#[test]
fn a_grant_of_the_install_dir_or_usr_merges_with_the_base() {
    let policy = compile(&[&format!("write:fs:{INSTALL}"), "read:fs:/usr"]).unwrap();
    let a = argv(&policy);
    assert!(has_bind(&a, "--bind", INSTALL, INSTALL));
    assert_eq!(
        crate::model::binds(&a)
            .iter()
            .filter(|b| b.2 == p("/usr"))
            .count(),
        1
    );
}

#[test]
fn a_grant_whose_symlink_leaves_it_is_refused_naming_it() {
    for (cap, declared, resolved) in [
        ("read:fs:/opt/escape", "/opt/escape", "/srv/secret"),
        (
            "write:fs:/opt/escape/new/dir",
            "/opt/escape/new/dir",
            "/srv/secret/new/dir",
        ),
        ("read:fs:/opt/inner", "/opt/inner", "/opt/data"),
        ("read:fs:/bin/bash", "/bin/bash", "/usr/bin/bash"),
    ] {
        let err = compile(&[cap]).unwrap_err();
        let CageError::Escapes {
            capability,
            declared: d,
            resolved: r,
        } = &err
        else {
            panic!("{cap}: {err}")
        };
        assert_eq!(
            (capability.as_str(), d.as_path(), r.as_path()),
            (cap, p(declared), p(resolved))
        );
        let msg = err.to_string();
        assert!(
            msg.contains(cap) && msg.contains(declared) && msg.contains(resolved),
            "{msg}"
        );
        assert!(!msg.contains('\n'));
    }
}

#[test]
fn root_etc_proc_dev_and_sys_cannot_be_granted() {
    for cap in [
        "read:fs:/",
        "read:fs:/etc",
        "write:fs:/etc/",
        "read:fs:/proc/1",
        "write:fs:/dev/shm",
        "write:fs:/sys/kernel/uevent_helper",
        "read:fs:/sys",
    ] {
        let err = compile(&[cap]).unwrap_err();
        assert!(matches!(err, CageError::Forbidden { .. }), "{cap}: {err}");
        assert!(err.to_string().contains(cap), "{err}");
    }
    // `..` never reaches the compiler's path logic: the grammar refuses it.
    let err = compile(&["read:fs:/opt/../etc"]).unwrap_err();
    assert!(matches!(err, CageError::BadCapability { .. }), "{err}");
    assert!(err.to_string().contains("`..`"), "{err}");
    // One /etc file is fine.
    let a = argv(&compile(&["read:fs:/etc/passwd"]).unwrap());
    assert!(has_bind(&a, "--ro-bind", "/etc/passwd", "/etc/passwd"));
}

#[test]
fn the_install_dir_must_exist() {
    let mut inputs = crate::model::inputs();
    inputs.install_dir = "/opt/plugins/nope".into();
    let err = crate::model::compile_in(&[], &inputs).unwrap_err();
    assert!(matches!(err, CageError::InstallDir { .. }), "{err}");
}

#[test]
fn storage_grants_nothing_in_the_cage() {
    let base = compile(&[]).unwrap();
    let with = compile(&["kaged:storage:read", "kaged:storage:write"]).unwrap();
    assert_eq!(base.mounts, with.mounts);
}
