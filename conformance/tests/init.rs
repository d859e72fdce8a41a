//! `kaged-conformance init DIR` on a plugin in another language (a copy of
//! `examples/python-notes` without its tests): the files are written and
//! run once; the workflow's `uses:` inputs are inputs of `action.yml`
//! (every required one given) and it has no `run:` step that could not run
//! here; the GitLab job's `script:` lines run here as written; the golden
//! file holds; a second `init` refuses to overwrite without `--force`.

mod support;

use std::path::{Path, PathBuf};

use kaged_test_support::command::assert_success;
use serde_json::Value;

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{} is not YAML: {e}", path.display()))
}

/// A copy of the Python example, without its tests and golden file.
fn plugin() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("py-notes");
    std::fs::create_dir(&dir).expect("mkdir");
    let example = support::workspace().join("examples/python-notes");
    for f in ["kaged-plugin.yaml", "plugin.py"] {
        std::fs::copy(example.join(f), dir.join(f)).expect("copy");
    }
    (tmp, dir)
}

fn cage() -> &'static str {
    if kaged_host_core::testing::cage_available_for_blocking("kaged-conformance init") {
        "require"
    } else {
        "off"
    }
}

#[test]
fn init_writes_ci_for_a_plugin_in_any_language_and_runs_it_once() {
    let (_tmp, dir) = plugin();
    let out = support::cmd()
        .args(["init", "--cage", cage()])
        .arg(&dir)
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
    ] {
        assert!(dir.join(f).is_file(), "{f} written");
    }
    // A conforming plugin: an empty baseline (its header only).
    let baseline = std::fs::read_to_string(dir.join(".kaged-known-failing.txt")).expect("baseline");
    assert!(baseline.lines().all(|l| l.starts_with('#')), "{baseline}");

    // The workflow: only `uses:` steps, each input one `action.yml` has.
    let action = yaml(&support::workspace().join("conformance/action/action.yml"));
    let inputs = action["inputs"].as_object().expect("inputs");
    let workflow = yaml(&dir.join(".github/workflows/kaged-conformance.yml"));
    let steps = workflow["jobs"]["conformance"]["steps"]
        .as_array()
        .expect("steps");
    assert!(steps.iter().all(|s| s.get("run").is_none()), "no run: step");
    let ours = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u == kaged_conformance::home::action_ref())
        })
        .expect("the kaged action");
    let with = ours["with"].as_object().expect("with");
    for k in with.keys() {
        assert!(inputs.contains_key(k), "{k} is not an input of action.yml");
    }
    for (k, v) in inputs {
        if v["required"] == true {
            assert!(with.contains_key(k), "the required input {k} is given");
        }
    }
    for (k, file) in [
        ("known-failing", ".kaged-known-failing.txt"),
        ("golden", "tests/scenario.golden.jsonl"),
    ] {
        assert_eq!(with[k], file);
        assert!(dir.join(file).is_file());
    }

    // The GitLab job's script, run here as written (the tools on PATH, as
    // its before_script installs them).
    let job = yaml(&dir.join("kaged-conformance.gitlab-ci.yml"));
    if support::kit_binary("kaged-host-sim").is_none() {
        return;
    }
    let path = support::kit_path();
    let script = job["kaged-conformance"]["script"]
        .as_array()
        .expect("script");
    assert_eq!(script.len(), 2, "{script:?}");
    for line in script {
        let line = line.as_str().expect("a line");
        let line = if cage() == "require" {
            line.to_string()
        } else {
            line.replace("--cage require", "--cage off")
        };
        let out = std::process::Command::new("bash")
            .args(["-e", "-c", &line])
            .current_dir(&dir)
            .env("PATH", &path)
            .output()
            .expect("bash");
        assert_success(&line, &out);
    }
    assert!(dir.join("conformance.xml").is_file());

    // Nothing is overwritten without --force.
    let again = support::cmd()
        .args(["init", "--cage", cage()])
        .arg(&dir)
        .output()
        .expect("runs");
    assert_eq!(again.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("already has .github/workflows/kaged-conformance.yml")
            && stderr.contains("(--force overwrites)"),
        "{stderr}"
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
    let workflow = yaml(&dir.join(".github/workflows/kaged-conformance.yml"));
    let with = &workflow["jobs"]["conformance"]["steps"][1]["with"];
    assert_eq!(with["policy"], "ci/registry.yaml", "{workflow}");
    let job = std::fs::read_to_string(dir.join("kaged-conformance.gitlab-ci.yml")).expect("job");
    assert!(job.contains("--policy ci/registry.yaml"), "{job}");
}
