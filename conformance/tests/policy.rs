//! `run --policy FILE`: a pass the certifier owns (issue 46). The
//! plugin's own baseline cannot certify a MUST failure, `*` never excuses
//! anything, the report's first line says certified or not and why, and
//! the verdicts resting on the plugin's own files are named.

mod support;

use std::path::Path;

use support::{cmd, own_fixture, stdout_json};

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

#[test]
fn a_star_baseline_under_a_policy_never_certifies() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let star = write(tmp.path(), "known-failing.txt", "# everything\n*\n");
    let policy = write(
        tmp.path(),
        "registry.yaml",
        "policy: 1\nname: registry\nrequire: should\nbaseline: should\n",
    );
    let plugin = own_fixture("unknown-method-ok");
    // The author's view: the baseline turns every failure into a warning.
    let out = cmd()
        .args(["run", "--format", "json", "--known-failing"])
        .arg(&star)
        .arg(&plugin)
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "without a policy, `*` excuses all"
    );
    assert!(stdout_json(&out).get("certification").is_none());
    // The certifier's: not certified, and why.
    let out = cmd()
        .args(["run", "--format", "json", "--known-failing"])
        .arg(&star)
        .arg("--policy")
        .arg(&policy)
        .arg(&plugin)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let v = stdout_json(&out);
    let c = &v["certification"];
    assert_eq!(c["outcome"], "not_certified", "{c}");
    assert_eq!(c["policy"]["name"], "registry");
    assert_eq!(c["policy"]["sha256"].as_str().map(str::len), Some(64));
    let first = c["reasons"][0].as_str().unwrap_or_default();
    assert!(
        first.contains("protocol.unknown_method") && first.contains("never certifies a MUST"),
        "{c}"
    );
    assert_eq!(c["plugin_inputs"][0]["what"], "baseline", "{c}");
    let known = v["cases"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["id"] == "protocol.unknown_method"))
        .expect("the case");
    assert!(known["known_failure"]
        .as_str()
        .unwrap_or_default()
        .ends_with("known-failing.txt"));
    // The human report's summary opens on the outcome.
    let out = cmd()
        .args(["run", "--known-failing"])
        .arg(&star)
        .arg("--policy")
        .arg(&policy)
        .arg(&plugin)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("CERTIFIED"))
        .unwrap_or_default();
    assert!(
        line.starts_with("NOT CERTIFIED under policy registry v1 (sha256 ")
            && line.contains("protocol.unknown_method"),
        "{text}"
    );
}

#[test]
fn a_conforming_plugin_is_certified_and_its_profiled_verdicts_are_named() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let policy = write(tmp.path(), "p.yaml", "policy: 1\n");
    let out = cmd()
        .args(["run", "--format", "json", "--policy"])
        .arg(&policy)
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    let v = stdout_json(&out);
    let c = &v["certification"];
    assert_eq!(out.status.code(), Some(0), "{c}");
    assert_eq!(c["outcome"], "certified", "{c}");
    assert_eq!(c["policy"]["name"], "p");
    let inputs = &c["plugin_inputs"][0];
    assert_eq!(inputs["what"], "profile", "{c}");
    assert!(inputs["file"]
        .as_str()
        .unwrap_or_default()
        .ends_with("kaged-conformance.yaml"));
    assert!(
        inputs["cases"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "methods.examples[notes.add]")),
        "{c}"
    );
    // Without the plugin's profile: those cases do not rest on it.
    let policy = write(tmp.path(), "q.yaml", "policy: 1\nplugin_profile: false\n");
    let out = cmd()
        .args(["run", "--format", "json", "--policy"])
        .arg(&policy)
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    let v = stdout_json(&out);
    assert_eq!(v["certification"]["plugin_inputs"], serde_json::json!([]));
    let examples = v["cases"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["id"] == "methods.examples[notes.add]"));
    assert!(
        examples.is_none_or(|x| x["status"] == "skip"),
        "{examples:?}"
    );
}

#[test]
fn a_policy_the_kit_cannot_read_is_refused_naming_what_is_wrong() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for (text, says) in [
        ("policy: 1\nbaseline: all\n", "baseline"),
        ("policy: 1\nallow_star: true\n", "allow_star"),
        ("policy: 9\n", "version"),
    ] {
        let policy = write(tmp.path(), "p.yaml", text);
        let out = cmd()
            .args(["run", "--policy"])
            .arg(&policy)
            .arg(own_fixture("conforming"))
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("invalid policy") && err.contains(says),
            "{text}: {err}"
        );
    }
}
