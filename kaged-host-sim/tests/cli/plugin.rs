//! `kaged-host-sim plugin …`: the install flow from the command line, with
//! consent, the local-config listing, the active-session guard and the
//! audit file.

use crate::support::host::fixture;
use assert_cmd::Command;
use kaged_test_support::command::assert_success;
use serde_json::Value;

fn cli(store: &std::path::Path) -> Command {
    let mut c = Command::cargo_bin("kaged-host-sim").expect("binary");
    c.env_remove("KAGED_HOME").arg("plugin");
    c.env("KAGED_HOME", store);
    c
}

fn stdout(c: &mut Command) -> String {
    let out = c.output().expect("run");
    assert_success(format_args!("{c:?}"), &out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn install_list_enable_and_uninstall_from_the_command_line() {
    let store = tempfile::tempdir().expect("tempdir");
    let audit = store.path().join("audit.jsonl");
    let src = fixture("shell-adapter");

    // Without a terminal or --yes, consent cannot be given: refused, exit 2.
    let out = cli(store.path())
        .arg("install")
        .arg(&src)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pass --yes"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(stdout(cli(store.path()).arg("list")).is_empty());

    let shown = stdout(
        cli(store.path())
            .args(["--audit"])
            .arg(&audit)
            .arg("install")
            .arg(&src)
            .arg("--yes"),
    );
    for line in [
        "Validating manifest...",
        "  name: my-simple-adapter",
        "    - net:[]",
        "✓ Installed my-simple-adapter 0.1.0",
        "plugin enable my-simple-adapter",
    ] {
        assert!(shown.contains(line), "{line:?} missing:\n{shown}");
    }
    let listed = stdout(cli(store.path()).arg("list"));
    assert!(
        listed.starts_with("my-simple-adapter\t0.1.0\tdisabled\tlocal\t"),
        "{listed}"
    );
    stdout(cli(store.path()).args(["enable", "my-simple-adapter"]));
    assert!(stdout(cli(store.path()).arg("list")).contains("\tenabled\t"));

    // ADDENDUM §16: an installed copy whose manifest no longer validates is
    // listed `disabled (invalid manifest)`, with the first error; the
    // manifest written back, it is enabled again.
    let manifest = store
        .path()
        .join("plugins/my-simple-adapter/kaged-plugin.yaml");
    let original = std::fs::read_to_string(&manifest).expect("the installed manifest");
    std::fs::write(&manifest, original.replace("kaged_api: 1", "kaged_api: 0")).expect("break it");
    let listed = stdout(cli(store.path()).arg("list"));
    assert!(
        listed.starts_with("my-simple-adapter\t0.1.0\tdisabled (invalid manifest)\tlocal\t"),
        "{listed}"
    );
    assert!(
        listed.contains("\n  → ") && listed.contains("kaged_api"),
        "{listed}"
    );
    std::fs::write(&manifest, original).expect("write it back");
    assert!(stdout(cli(store.path()).arg("list")).contains("\tenabled\t"));

    let out = cli(store.path())
        .args(["uninstall", "my-simple-adapter", "--active-sessions", "1"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("active in 1 session(s); stop sessions first, or use --force"));
    let done = stdout(cli(store.path()).args(["--audit"]).arg(&audit).args([
        "uninstall",
        "my-simple-adapter",
        "--active-sessions",
        "1",
        "--force",
    ]));
    assert!(done.contains("✓ Removed plugin files"), "{done}");
    assert!(stdout(cli(store.path()).arg("list")).is_empty());

    let events: Vec<String> = std::fs::read_to_string(&audit)
        .expect("audit")
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).expect("json")["event"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(events, ["plugin.installed", "plugin.uninstalled"]);
}

#[test]
fn bad_input_is_one_line_with_the_right_exit_status() {
    let store = tempfile::tempdir().expect("tempdir");
    let bad = tempfile::tempdir().expect("tempdir");
    std::fs::write(bad.path().join("kaged-plugin.yaml"), "name: Bad Name\n").expect("write");
    for (args, code, needle) in [
        (
            vec!["install".to_string(), "/no/such/dir".to_string()],
            2,
            "no such plugin directory",
        ),
        (
            vec![
                "install".to_string(),
                bad.path().display().to_string(),
                "--yes".to_string(),
            ],
            1,
            "invalid manifest",
        ),
        (
            vec!["uninstall".to_string(), "ghost".to_string()],
            1,
            "ghost is not installed",
        ),
        (
            vec!["enable".to_string(), "ghost".to_string()],
            1,
            "ghost is not installed",
        ),
    ] {
        let out = cli(store.path()).args(&args).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    let mut c = Command::cargo_bin("kaged-host-sim").expect("binary");
    let out = c
        .env_remove("KAGED_HOME")
        .args(["plugin", "list"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--store DIR"));
}

#[test]
fn a_development_dir_whose_command_leaves_it_is_refused_with_a_hint_to_pack() {
    // examples/oh-my-pi's dev manifest runs ../../target/debug/oh-my-pi:
    // the store's copy could not start it (ADDENDUM §14).
    let store = tempfile::tempdir().expect("tempdir");
    let dev_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/oh-my-pi");
    let out = cli(store.path())
        .arg("install")
        .arg(&dev_dir)
        .arg("--yes")
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for needle in [
        "oh-my-pi is not self-contained",
        "`../../target/debug/oh-my-pi` leaves the plugin directory",
        "pack the plugin first",
        "cargo kaged pack",
    ] {
        assert!(err.contains(needle), "{needle:?} missing: {err}");
    }
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(stdout(cli(store.path()).arg("list")).is_empty());
    assert!(!store.path().join("plugins/oh-my-pi").exists());
}

#[test]
fn install_project_installs_what_the_project_lacks_from_its_sources() {
    // plugin-host.md § Install flow, "Project-load-driven install" and
    // "Source resolution".
    let store = tempfile::tempdir().expect("tempdir");
    let proj = tempfile::tempdir().expect("tempdir");
    let vendor = proj.path().join("vendor/adapter");
    std::fs::create_dir_all(&vendor).expect("mkdir");
    for file in ["kaged-plugin.yaml", "plugin.sh"] {
        std::fs::copy(fixture("shell-adapter").join(file), vendor.join(file)).expect("copy");
    }
    let project = proj.path().join("project.yaml");
    std::fs::write(
        &project,
        "primary:\n  plugins:\n    adapter:\n      package: \"@kaged/my-simple-adapter\"\n      version: \"^0.1\"\n      source: ./vendor/adapter\n    other:\n      package: \"@kaged/not-here\"\n    remote:\n      package: \"@kaged/remote\"\n      source: https://github.com/example/remote\n",
    )
    .expect("write the project");
    let run = |extra: &[&str]| {
        let mut c = cli(store.path());
        c.arg("install-project").arg(&project).args(extra);
        c.output().expect("run")
    };

    // Without consent (no terminal, no --yes) nothing is installed.
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("pass --yes"), "{text}");
    assert!(stdout(cli(store.path()).arg("list")).is_empty());

    let out = run(&["--yes"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let source = vendor.display().to_string();
    for want in [
        format!("@kaged/my-simple-adapter: not installed; source {source}"),
        "✓ Installed my-simple-adapter 0.1.0 for the project (project-driven: local = false)".into(),
        "@kaged/not-here: not installed; source not specified".into(),
        "@kaged/remote: not installed; source https://github.com/example/remote: fetching git sources is not simulated".into(),
        "2 plugin(s) pending".into(),
    ] {
        assert!(text.contains(&want), "{want:?} in\n{text}");
    }
    let list = stdout(cli(store.path()).arg("list"));
    assert!(
        list.starts_with("my-simple-adapter\t0.1.0\tdisabled\tproject\t"),
        "{list}"
    );

    // Installed now; a version requirement it misses keeps it pending.
    let text = std::fs::read_to_string(&project).expect("read");
    std::fs::write(&project, text.replace("\"^0.1\"", "\"^2\"")).expect("write");
    let out = run(&["--yes"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("@kaged/my-simple-adapter: 0.1.0 is installed, the project requires `^2`"),
        "{text}"
    );
}
