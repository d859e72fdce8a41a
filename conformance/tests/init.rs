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

use std::path::PathBuf;

use kaged_test_support::command::assert_success;
use support::ci_steps::{bun, cage, init_and_run_the_ci};

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
