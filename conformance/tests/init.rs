//! `kaged-conformance init DIR` on plugins in other languages (copies of
//! `examples/python-notes` and `examples/node-notes`, without their tests,
//! and the node example as a TypeScript plugin on bun):
//! the files are written and run once, with no placeholder and the kit's
//! version pinned; then every step of the GitHub workflow and the GitLab
//! job runs here as the runner would run it, stubbed only at the network
//! boundary (`apt-get`, `curl`, `cargo binstall` reach nothing; `cargo
//! install` stands in for crates.io with this build's binaries), and
//! certifies the plugin caged; a second `init` leaves what exists alone.

mod support;

use std::path::{Path, PathBuf};

use kaged_test_support::command::assert_success;
use serde_json::Value;

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{} is not YAML: {e}", path.display()))
}

/// A copy of an example (its manifest and program), without its tests.
fn example(name: &str, files: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join(name);
    std::fs::create_dir(&dir).expect("mkdir");
    let example = support::workspace().join("examples").join(name);
    for f in files {
        std::fs::copy(example.join(f), dir.join(f)).expect("copy");
    }
    (tmp, dir)
}

/// A copy of the Python example.
fn plugin() -> (tempfile::TempDir, PathBuf) {
    example("python-notes", &["kaged-plugin.yaml", "plugin.py"])
}

fn cage() -> &'static str {
    if kaged_host_core::testing::cage_available_for_blocking("kaged-conformance init") {
        "require"
    } else {
        "off"
    }
}

/// The stand-ins at the network boundary, in `bin` (first on `PATH`):
/// `sudo` runs its command; `apt-get` and `sysctl` log what they were asked
/// and succeed (what they would install is on this machine already);
/// `curl` reaches nothing; `cargo binstall` finds no release archive;
/// `cargo install --root R crate@V...` stands in for crates.io with this
/// build's binaries, and refuses any other version than the kit's.
fn stubs(bin: &Path, log: &Path) {
    std::fs::create_dir_all(bin).expect("mkdir");
    let conformance = PathBuf::from(env!("CARGO_BIN_EXE_kaged-conformance"));
    let built = conformance.parent().expect("bin dir");
    let v = kaged_conformance::init::KIT_VERSION;
    let scripts = [
        ("sudo", "#!/bin/bash\nexec \"$@\"\n".to_string()),
        ("apt-get", format!("#!/bin/bash\necho \"apt-get $*\" >> {}\n", log.display())),
        ("sysctl", format!("#!/bin/bash\necho \"sysctl $*\" >> {}\n", log.display())),
        ("curl", "#!/bin/bash\necho 'curl: the network is out of reach in this test' >&2\nexit 6\n".to_string()),
        ("cargo", format!(
            "#!/bin/bash\necho \"cargo $*\" >> {log}\ncase \"$1\" in\n  binstall) exit 1;;\n  install)\n    shift; root=\n    while [ $# -gt 0 ]; do case \"$1\" in\n      --root) root=$2; shift 2;;\n      --locked) shift;;\n      *@{v}) shift;;\n      *) echo \"cargo stub: $1 is not the kit at {v}\" >&2; exit 101;;\n    esac; done\n    mkdir -p \"$root/bin\"\n    for b in kaged-conformance kaged-host-sim kaged-cage-init; do cp {built}/$b \"$root/bin/\"; done;;\n  *) exit 101;;\nesac\n",
            log = log.display(),
            built = built.display(),
        )),
    ];
    for (name, text) in scripts {
        let path = bin.join(name);
        std::fs::write(&path, text).expect("write a stub");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

/// `--cage require` as written, or `off` where this machine cannot cage.
fn caged(line: &str) -> String {
    match cage() {
        "require" => line.to_string(),
        _ => line.replace("--cage require", "--cage off"),
    }
}

/// Run the workflow's steps in `dir` as a GitHub runner would: each `run:`
/// with `bash -e`, `$GITHUB_PATH` added to `PATH` after each step, the
/// `uses:` steps the known actions (checked out already, nothing cached,
/// the upload left to GitHub).
fn run_workflow(dir: &Path, home: &Path, bin: &Path) {
    let workflow = yaml(&dir.join(".github/workflows/kaged-conformance.yml"));
    let steps = workflow["jobs"]["conformance"]["steps"]
        .as_array()
        .expect("steps")
        .clone();
    let github_path = home.join("github-path");
    let summary = home.join("step-summary");
    let mut path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for step in &steps {
        if let Some(uses) = step["uses"].as_str() {
            assert!(
                [
                    "actions/checkout@v4",
                    "actions/cache@v4",
                    "actions/upload-artifact@v4"
                ]
                .contains(&uses),
                "an action this test does not know: {uses}"
            );
            continue;
        }
        let run = caged(step["run"].as_str().expect("a run: step"));
        let out = std::process::Command::new("bash")
            .args(["-e", "-c", &run])
            .current_dir(dir)
            .env("PATH", &path)
            .env("HOME", home)
            .env("GITHUB_PATH", &github_path)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .output()
            .expect("bash");
        assert_success(format!("the step {:?}", step["name"]), &out);
        for added in std::fs::read_to_string(&github_path)
            .unwrap_or_default()
            .lines()
        {
            if !path.starts_with(added) {
                path = format!("{added}:{path}");
            }
        }
    }
    let summary = std::fs::read_to_string(&summary).unwrap_or_default();
    assert!(
        summary.contains("kaged conformance") || summary.contains("passed"),
        "{summary}"
    );
}

/// Run the GitLab job in `dir` as a shell executor would: `before_script`
/// and `script` in one `bash -e` session.
fn run_gitlab_job(dir: &Path, home: &Path, bin: &Path) {
    let job = yaml(&dir.join("kaged-conformance.gitlab-ci.yml"));
    let lines: Vec<String> = ["before_script", "script"]
        .iter()
        .flat_map(|k| {
            job["kaged-conformance"][k]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|l| caged(l.as_str().expect("a line")))
        .collect();
    let out = std::process::Command::new("bash")
        .args(["-e", "-c", &lines.join("\n")])
        .current_dir(dir)
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("HOME", home)
        .env("CI_PROJECT_DIR", dir)
        .output()
        .expect("bash");
    assert_success("the GitLab job", &out);
}

/// `init` on `dir`, the files checked, and both CI files run here.
fn init_and_run_the_ci(dir: &Path, runtime_package: &str) {
    let out = support::cmd()
        .args(["init", "--cage", cage()])
        .arg(dir)
        .output()
        .expect("runs");
    assert_success("kaged-conformance init", &out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("suite: ")
            && stdout.contains("session tests/scenario.yaml: 2 step(s), 0 failed"),
        "{stdout}"
    );
    for f in [
        ".github/workflows/kaged-conformance.yml",
        "kaged-conformance.gitlab-ci.yml",
        "tests/scenario.yaml",
        "tests/scenario.golden.jsonl",
        ".kaged-known-failing.txt",
        ".kagedignore",
    ] {
        assert!(dir.join(f).is_file(), "{f} written");
        assert!(
            stdout.contains(&format!("wrote {}", dir.join(f).display())),
            "{stdout}"
        );
    }
    // No placeholder; the kit pinned at this version; the runtime and
    // bubblewrap installed.
    let v = kaged_conformance::init::KIT_VERSION;
    for f in [
        ".github/workflows/kaged-conformance.yml",
        "kaged-conformance.gitlab-ci.yml",
    ] {
        let text = std::fs::read_to_string(dir.join(f)).expect("read");
        assert!(!text.contains("OWNER"), "{f} names a placeholder:\n{text}");
        assert!(
            text.contains(&format!("v=\"{v}\"")) || text.contains(&format!("version: \"{v}\"")),
            "{f} pins {v}"
        );
        assert!(
            text.contains(&format!("bubblewrap {runtime_package}")),
            "{f}:\n{text}"
        );
    }

    let Some(_) = support::kit_binary("kaged-host-sim") else {
        return;
    };
    let Some(_) = support::kit_binary("kaged-cage-init") else {
        return;
    };
    for (name, run) in [
        ("github", run_workflow as fn(&Path, &Path, &Path)),
        ("gitlab", run_gitlab_job),
    ] {
        let home = tempfile::tempdir().expect("home");
        let log = home.path().join("stubs.log");
        let bin = home.path().join("stubs");
        stubs(&bin, &log);
        let _ = std::fs::remove_dir_all(dir.join("kaged-reports"));
        run(dir, home.path(), &bin);
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            log.contains(&format!("install -y -qq bubblewrap {runtime_package}")),
            "{name}: {log}"
        );
        assert!(
            log.contains("cargo binstall") && log.contains("cargo install --locked --root"),
            "{name}: binstall tried, then cargo install: {log}"
        );
        for f in ["conformance.xml", "conformance.html"] {
            assert!(dir.join("kaged-reports").join(f).is_file(), "{name}: {f}");
        }
        let _ = std::fs::remove_dir_all(dir.join(".kaged-kit"));
    }
}

#[test]
fn init_writes_ci_that_runs_as_written_for_a_python_plugin() {
    let (_tmp, dir) = plugin();
    init_and_run_the_ci(&dir, "python3");

    // What exists is left alone, and said; --force rewrites it.
    std::fs::write(dir.join("tests/scenario.yaml"), "steps:\n  - call: ping\n").expect("edit");
    // The author's own `.kagedignore` is never rewritten: what it lacks is
    // named.
    std::fs::write(dir.join(".kagedignore"), "notes/\n/kaged-reports\n").expect("edit");
    let again = support::cmd()
        .args(["init", "--cage", cage()])
        .arg(&dir)
        .output()
        .expect("runs");
    assert_success("a second init", &again);
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(
        said.contains("kept") && said.contains("--force rewrites it"),
        "{said}"
    );
    assert!(
        said.contains("session tests/scenario.yaml: 1 step(s), 0 failed"),
        "the edited script ran: {said}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("tests/scenario.yaml")).expect("read"),
        "steps:\n  - call: ping\n"
    );
    assert!(
        said.contains("(the author's): add /.kaged-kit/ to it"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join(".kagedignore")).expect("read"),
        "notes/\n/kaged-reports\n"
    );
    let forced = support::cmd()
        .args(["init", "--force", "--cage", cage()])
        .arg(&dir)
        .output()
        .expect("runs");
    assert_success("init --force", &forced);
    assert!(std::fs::read_to_string(dir.join("tests/scenario.yaml"))
        .expect("read")
        .contains("# A session script"));
}

#[test]
fn init_writes_ci_that_runs_as_written_for_a_node_plugin() {
    let (_tmp, dir) = example("node-notes", &["kaged-plugin.yaml", "plugin.js"]);
    init_and_run_the_ci(&dir, "nodejs");
}

/// bun, where the cage sees it (`/usr/bin` or `/usr/local/bin`: the
/// plugin names it bare, resolved on the plugin `PATH`), or why not.
fn bun() -> Result<PathBuf, String> {
    ["/usr/bin/bun", "/usr/local/bin/bun"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| "no bun under /usr/bin or /usr/local/bin (npm install -g bun)".to_string())
}

#[test]
fn init_writes_ci_that_runs_as_written_for_a_bun_plugin() {
    // A TypeScript plugin on bun, laid out as one: `plugin.ts` beside the
    // manifest, `command: [bun, plugin.ts]` (the node example's code under
    // another name: bun runs it as TypeScript).
    let Some(_) = kaged_test_support::ci::required_in_ci("bun", bun()) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("bun-notes");
    std::fs::create_dir(&dir).expect("mkdir");
    let node = support::workspace().join("examples/node-notes");
    let code = std::fs::read_to_string(node.join("plugin.js")).expect("plugin.js");
    let code = code
        .replacen("#!/usr/bin/node", "#!/usr/bin/env bun", 1)
        .replace("node-notes", "bun-notes");
    std::fs::write(dir.join("plugin.ts"), code).expect("plugin.ts");
    let manifest = std::fs::read_to_string(node.join("kaged-plugin.yaml")).expect("manifest");
    let manifest = manifest.replace("node-notes", "bun-notes").replace(
        "command: [/usr/bin/node, plugin.js]",
        "command: [bun, plugin.ts]",
    );
    assert!(manifest.contains("command: [bun, plugin.ts]"), "{manifest}");
    std::fs::write(dir.join("kaged-plugin.yaml"), manifest).expect("manifest");
    init_and_run_the_ci(&dir, "curl unzip ca-certificates");
}

#[test]
fn the_runtime_is_read_from_the_command_for_bun_deno_and_scripts() {
    // bun and deno are not Debian packages: their installers put them under
    // /usr/local, which the cage binds.
    let (_tmp, dir) = plugin();
    let manifest = dir.join("kaged-plugin.yaml");
    let text = std::fs::read_to_string(&manifest).expect("read");
    std::fs::write(
        &manifest,
        text.replace(
            "[/usr/bin/python3, plugin.py]",
            "[/usr/local/bin/bun, plugin.ts]",
        ),
    )
    .expect("write");
    let m = kaged_plugin_protocol::manifest::Manifest::load_dir(&dir).expect("manifest");
    let runtime = kaged_conformance::init::Runtime::detect(&dir, &m.command);
    assert_eq!(runtime, kaged_conformance::init::Runtime::Bun);
    let plan = kaged_conformance::init::CiPlan {
        runtime,
        runtime_version: Some("1.4.5"),
        policy: None,
        uncaged_allowed: false,
    };
    let workflow = kaged_conformance::init::workflow(&plan);
    assert!(
        workflow.contains("BUN_INSTALL=/usr/local bash"),
        "{workflow}"
    );
    let job = kaged_conformance::init::gitlab_job(&plan);
    assert!(
        job.contains(
            "curl -fsSL https://bun.sh/install | BUN_INSTALL=/usr/local bash -s bun-v1.4.5"
        ),
        "{job}"
    );
    assert!(
        job.contains("--cage require") && job.contains("privileged"),
        "{job}"
    );
}

#[test]
fn init_refuses_a_directory_without_a_valid_plugin() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = support::cmd()
        .arg("init")
        .arg(tmp.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("kaged-conformance: error: ")
            && stderr.contains("holds no valid plugin"),
        "{stderr}"
    );
    assert!(
        std::fs::read_dir(tmp.path()).expect("dir").next().is_none(),
        "nothing written"
    );
}

/// `init --policy FILE`: the policy is checked first (an invalid one
/// writes nothing), and the workflow and the GitLab job certify under it.
#[test]
fn init_with_a_policy_writes_ci_that_certifies_under_it() {
    let (_tmp, dir) = plugin();
    std::fs::create_dir(dir.join("ci")).expect("mkdir");
    std::fs::write(dir.join("ci/bad.yaml"), "policy: 1\nrequires: must\n").expect("write");
    let out = support::cmd()
        .args(["init", "--cage", cage(), "--policy", "ci/bad.yaml"])
        .arg(&dir)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid policy") && err.contains("requires"),
        "{err}"
    );
    assert!(!dir.join(".github").exists(), "nothing written");

    std::fs::write(dir.join("ci/registry.yaml"), "policy: 1\nname: registry\n").expect("write");
    let out = support::cmd()
        .args(["init", "--cage", cage(), "--policy", "ci/registry.yaml"])
        .arg(&dir)
        .output()
        .expect("runs");
    assert_success("kaged-conformance init --policy", &out);
    let workflow = std::fs::read_to_string(dir.join(".github/workflows/kaged-conformance.yml"))
        .expect("workflow");
    assert!(workflow.contains("--policy ci/registry.yaml"), "{workflow}");
    let job = std::fs::read_to_string(dir.join("kaged-conformance.gitlab-ci.yml")).expect("job");
    assert!(job.contains("--policy ci/registry.yaml"), "{job}");
    assert!(
        job.contains("--cage require"),
        "the policy requires the cage: {job}"
    );

    // A policy that accepts an uncaged run: the GitLab job runs `auto`.
    std::fs::write(
        dir.join("ci/any.yaml"),
        "policy: 1\nname: lenient\ncage: any\n",
    )
    .expect("write");
    let out = support::cmd()
        .args([
            "init",
            "--force",
            "--cage",
            cage(),
            "--policy",
            "ci/any.yaml",
        ])
        .arg(&dir)
        .output()
        .expect("runs");
    assert_success("kaged-conformance init --policy (cage: any)", &out);
    let job = std::fs::read_to_string(dir.join("kaged-conformance.gitlab-ci.yml")).expect("job");
    assert!(
        job.contains("--cage auto") && job.contains("cage: unavailable"),
        "{job}"
    );
}
