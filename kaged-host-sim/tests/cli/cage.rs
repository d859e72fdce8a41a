//! `kaged-host-sim cage DIR [--json]`: the compiled cage, as an author
//! reads it (ADDENDUM §13).

use std::os::unix::fs::symlink;

use crate::support::host::fixture;
use assert_cmd::Command;
use serde_json::Value;

fn cli() -> Command {
    let mut c = Command::cargo_bin("kaged-host-sim").expect("binary");
    c.timeout(std::time::Duration::from_secs(60));
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn cage_prints_the_binds_net_seccomp_cgroup_and_argv() {
    let out = cli()
        .arg("cage")
        .arg(fixture("cage-demo"))
        .output()
        .expect("run");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for want in [
        "ro       /usr/share/zoneinfo  (read:fs:/usr/share/zoneinfo",
        "rw       /var/tmp/kaged-cage-demo  (write:fs:/var/tmp/kaged-cage-demo, exec:sh:/var/tmp/kaged-cage-demo",
        "(install dir)",
        "cwd and HOME:",
        "network: filtered, granted api.example.com:443",
        "filtered: the cage has its own network namespace",
        "stand-in 198.18.0.1 for api.example.com",
        "ro       /etc/hosts  (generated: the granted hosts, see network)",
        "exec: sh (",
        "working dir /var/tmp/kaged-cage-demo (rw)",
        "seccomp: default profile, EPERM for mount",
        "unshare",
        "cgroup: ",
        "wanted: memory.max 512 MiB, pids.max 100, cpu.weight 25 (cpu shares 256)",
        "bwrap argv:",
        "--ro-bind-data <fd:hosts-file> /etc/hosts",
        "--seccomp <seccomp-fd>",
        "--clearenv",
    ] {
        assert!(stdout.contains(want), "missing {want:?} in:\n{stdout}");
    }
    assert!(!stdout.contains("--ro-bind /etc /etc"), "{stdout}");
    assert!(!stdout.contains("--share-net"), "{stdout}");
}

#[test]
fn cage_json_has_the_policy_and_the_argv() {
    let out = cli()
        .arg("cage")
        .arg(fixture("good"))
        .arg("--json")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["policy"]["net"]["mode"], "none");
    assert_eq!(v["policy"]["seccomp"]["profile"], "default");
    assert!(v["policy"]["cgroup"]["state"]["state"].is_string(), "{v}");
    assert!(v["policy"]["mounts"]
        .as_array()
        .is_some_and(|m| !m.is_empty()));
    let argv: Vec<&str> = v["bwrap"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(argv[0], "bwrap");
    assert!(!argv.contains(&"--share-net"));
    let dash = argv.iter().position(|a| *a == "--").unwrap();
    assert!(argv[dash + 1].ends_with("good/plugin.py"), "{argv:?}");
    assert_eq!(v["command"][0], argv[dash + 1]);
}

#[test]
fn cage_refuses_a_grant_whose_symlink_escapes_in_one_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(tmp.path()).expect("canonical");
    let dir = root.join("plugin");
    std::fs::create_dir(&dir).expect("mkdir");
    symlink("/etc", root.join("config")).expect("symlink");
    let cap = format!("read:fs:{}/config", root.display());
    std::fs::write(
        dir.join("kaged-plugin.yaml"),
        format!(
            "name: escapee\nversion: 1.0.0\nkaged_api: 1\ndescription: d\n\
             command: [/usr/bin/true]\ncapabilities: [\"{cap}\"]\n"
        ),
    )
    .expect("manifest");
    let out = cli().arg("cage").arg(&dir).output().expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("`{cap}`")) && err.contains("resolves to /etc"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn cage_of_an_invalid_manifest_exits_1_with_the_report() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        tmp.path().join("kaged-plugin.yaml"),
        "name: bad\nversion: 1.0.0\nkaged_api: 1\ndescription: d\n\
         command: [/usr/bin/true]\ncapabilities: [\"read:fs:relative\"]\n",
    )
    .expect("manifest");
    let out = cli().arg("cage").arg(tmp.path()).output().expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("read:fs:relative"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("no cage compiled"),
        "{}",
        text(&out.stderr)
    );
}
