//! `kaged-host-sim plugin …`: the install flow from the command line, with
//! consent, the local-config listing, the active-session guard and the
//! audit file.

use crate::support::host::{fixture, shell_adapter_as};
use assert_cmd::Command;
use kaged_test_support::command::{assert_success, git};
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

/// A git repository at `dir` holding the shell adapter's files with its
/// manifest's version set to `version`, committed and tagged `tag`.
fn git_repo(dir: &std::path::Path, version: &str, tag: &str) {
    shell_adapter_as(dir, "my-simple-adapter");
    let manifest = dir.join("kaged-plugin.yaml");
    let text = std::fs::read_to_string(&manifest).expect("read");
    std::fs::write(
        &manifest,
        text.replace("version: 0.1.0", &format!("version: {version}")),
    )
    .expect("write");
    git(dir, &["init", "--quiet", "--initial-branch", "main"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "--quiet", "-m", "v"]);
    git(dir, &["tag", tag]);
}

#[test]
fn install_project_installs_what_the_project_lacks_from_its_sources() {
    // plugin-host.md § Install flow, "Project-load-driven install" and
    // "Source resolution"; ADDENDUM §16 (git sources fetched, the version
    // checked before installing, `local = false` for the project only).
    let store = tempfile::tempdir().expect("tempdir");
    let proj = tempfile::tempdir().expect("tempdir");
    let vendor = proj.path().join("vendor/adapter");
    shell_adapter_as(&vendor, "my-simple-adapter");
    let project = proj.path().join("project.yaml");
    let write_project = |adapter_version: &str, remote: &str| {
        std::fs::write(
            &project,
            format!("primary:\n  plugins:\n    adapter:\n      package: \"@kaged/my-simple-adapter\"\n      version: \"{adapter_version}\"\n      source: ./vendor/adapter\n    other:\n      package: \"@kaged/not-here\"\n    remote:\n      package: \"@kaged/remote\"\n      source: {remote}\n"),
        )
        .expect("write the project");
    };
    let run = |extra: &[&str]| {
        let mut c = cli(store.path());
        c.arg("install-project").arg(&project).args(extra);
        c.output().expect("run")
    };

    // A version requirement the source misses: refused before anything is
    // installed (and an unreachable git source stays pending).
    let missing = proj.path().join("no-such-repo");
    write_project("^2", &format!("file://{}", missing.display()));
    let out = run(&["--yes"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("my-simple-adapter 0.1.0 does not meet the project's requirement `^2`; nothing was installed"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "@kaged/remote: not installed: cannot fetch file://{}",
            missing.display()
        )),
        "{text}"
    );
    assert!(stdout(cli(store.path()).arg("list")).is_empty());
    assert!(!store.path().join("plugins/my-simple-adapter").exists());

    // Without consent (no terminal, no --yes) nothing is fetched or installed.
    write_project("^0.1", &format!("file://{}", missing.display()));
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("pass --yes"), "{text}");
    assert!(stdout(cli(store.path()).arg("list")).is_empty());

    let out = run(&["--yes"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let source = vendor.display().to_string();
    // The project's id: its directory.
    let id = proj.path().display().to_string();
    for want in [
        format!("@kaged/my-simple-adapter: not installed; source {source}"),
        format!("✓ Installed my-simple-adapter 0.1.0 for the project (project-driven: local = false, enabled for {id})"),
        "@kaged/not-here: not installed; source not specified".into(),
        "2 plugin(s) pending".into(),
    ] {
        assert!(text.contains(&want), "{want:?} in\n{text}");
    }
    let list = stdout(cli(store.path()).arg("list"));
    assert!(
        list.starts_with("my-simple-adapter\t0.1.0\tenabled\tproject\t"),
        "{list}"
    );
    let config = std::fs::read_to_string(store.path().join("config.toml")).expect("config");
    assert!(
        config.contains("local = false") && config.contains(&format!("projects = [\"{id}\"]")),
        "{config}"
    );

    // Installed now; a version requirement it misses keeps it pending.
    write_project("^2", &format!("file://{}", missing.display()));
    let out = run(&["--yes"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("@kaged/my-simple-adapter: 0.1.0 is installed, the project requires `^2`"),
        "{text}"
    );
}

#[test]
fn install_project_fetches_git_sources_at_the_versions_tag_offline() {
    // `file://` and `git+file://` sources are cloned with git, shallow, at
    // `v<version>` when the declared version is exact; no network.
    let store = tempfile::tempdir().expect("tempdir");
    let proj = tempfile::tempdir().expect("tempdir");
    let repo = proj.path().join("repos/adapter");
    git_repo(&repo, "0.3.0", "v0.3.0");
    // A later commit on the default branch the tag does not hold.
    let manifest = repo.join("kaged-plugin.yaml");
    let text = std::fs::read_to_string(&manifest).expect("read");
    std::fs::write(
        &manifest,
        text.replace("version: 0.3.0", "version: 0.4.0-dev"),
    )
    .expect("write");
    git(&repo, &["commit", "--quiet", "-am", "dev"]);
    let project = proj.path().join("project.yaml");
    std::fs::write(
        &project,
        format!("primary:\n  plugins:\n    adapter:\n      package: \"@kaged/my-simple-adapter\"\n      version: \"0.3.0\"\n      source: git+file://{}\n", repo.display()),
    )
    .expect("write the project");
    // No consent: not even fetched.
    let out = cli(store.path())
        .arg("install-project")
        .arg(&project)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("@kaged/my-simple-adapter: not fetched (consent needed"),
        "{text}"
    );
    let out = cli(store.path())
        .arg("install-project")
        .arg(&project)
        .arg("--yes")
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("Fetching file://{} with git...", repo.display())),
        "{text}"
    );
    assert!(
        text.contains("✓ Installed my-simple-adapter 0.3.0 for the project"),
        "the tag's version, not the branch's: {text}"
    );
    let copy = store.path().join("plugins/my-simple-adapter");
    assert!(copy.join("plugin.sh").is_file());
    assert!(!copy.join(".git").exists(), "history is never copied");
}
