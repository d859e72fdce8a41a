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
        // A syntax error: where, on one line, not the parser's snippet.
        ("policy: 1\ncage: [require\n", "p.yaml: line 2 column 7: "),
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
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    }
}

/// `fuzz --policy FILE` fuzzes at the policy's depth and certifies the
/// run; a shallower `--cases` is refused, and so is a policy without a
/// fuzz depth. `policy FILE` prints the checked policy as JSON.
#[test]
fn fuzz_under_a_policy_runs_at_its_depth_and_certifies() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let policy = write(
        tmp.path(),
        "registry.yaml",
        "policy: 1\nname: registry\ncage: any\ngolden: ignore\nfuzz: {cases: 4, soak: 20}\n",
    );
    let shown = cmd().arg("policy").arg(&policy).output().expect("runs");
    assert_eq!(shown.status.code(), Some(0));
    let json = stdout_json(&shown);
    assert_eq!(json["golden"], "ignore");
    assert_eq!(json["fuzz"], serde_json::json!({"cases": 4, "soak": 20}));
    assert_eq!(json["require"], "must", "defaults are filled in: {json}");

    let plugin = own_fixture("conforming");
    let out = cmd()
        .args(["fuzz", "--seed", "2", "--format", "json", "--policy"])
        .arg(&policy)
        .arg(&plugin)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("for 4 sequence(s) at most"), "{stderr}");
    let report = stdout_json(&out);
    assert_eq!(report["certification"]["outcome"], "certified", "{report}");
    assert_eq!(report["certification"]["policy"]["name"], "registry");
    assert!(
        report["cage"].is_string(),
        "the report says how it ran: {report}"
    );
    // The cage as the spawns got it, the same as `run` says (the cgroup
    // applied where it is), not only as compiled.
    let run = cmd()
        .args(["run", "--format", "json"])
        .arg(&plugin)
        .output()
        .expect("runs");
    let run = stdout_json(&run);
    assert_eq!(
        report["cage_policy"]["cgroup"], run["cage_policy"]["cgroup"],
        "fuzz: {}\nrun: {}",
        report["cage_policy"], run["cage_policy"]
    );

    let shallow = cmd()
        .args(["fuzz", "--cases", "2", "--policy"])
        .arg(&policy)
        .arg(&plugin)
        .output()
        .expect("runs");
    assert_eq!(shallow.status.code(), Some(2));
    let err = String::from_utf8_lossy(&shallow.stderr);
    assert!(
        err.contains("--cases 2 is shallower than the policy's 4"),
        "{err}"
    );

    let no_depth = write(tmp.path(), "run-only.yaml", "policy: 1\n");
    let refused = cmd()
        .args(["fuzz", "--policy"])
        .arg(&no_depth)
        .arg(&plugin)
        .output()
        .expect("runs");
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("sets no fuzz depth"), "{err}");
    let bad = write(
        tmp.path(),
        "bad.yaml",
        "policy: 1\nfuzz: {cases: 3, depth: 9}\n",
    );
    let refused = cmd().arg("policy").arg(&bad).output().expect("runs");
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("invalid policy") && err.contains("depth"),
        "{err}"
    );
}

/// A fuzz run under `cage: require` that ran uncaged is not certified,
/// and the report says why.
#[test]
fn an_uncaged_fuzz_run_is_not_certified_under_cage_require() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let policy = write(
        tmp.path(),
        "p.yaml",
        "policy: 1\nfuzz: {cases: 2, soak: 0}\n",
    );
    let out = cmd()
        .args([
            "fuzz", "--seed", "2", "--cage", "off", "--format", "json", "--policy",
        ])
        .arg(&policy)
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let report = stdout_json(&out);
    assert_eq!(
        report["certification"]["outcome"], "not_certified",
        "{report}"
    );
    let reasons = report["certification"]["reasons"].to_string();
    assert!(reasons.contains("uncaged"), "{reasons}");
}

/// A `pattern` without `examples` (node-bookmarks, an outside plugin, as
/// its author first wrote it): the suite cannot make valid arguments, so
/// `methods.tool_valid_args` is `untestable` and no policy certifies the
/// run; arguments that break only the field in question are still made,
/// and the plugin's `-32602` for them passes.
#[test]
fn a_tool_schema_the_suite_cannot_satisfy_is_not_certified() {
    let (tmp, dir) = support::outside_fixture("node-bookmarks");
    let manifest = dir.join("kaged-plugin.yaml");
    let text = std::fs::read_to_string(&manifest).expect("manifest");
    let stripped: String = text
        .lines()
        .filter(|l| !l.contains("examples: [\"https://nodejs.org/api/readline.html\"]"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(stripped, text, "the url's examples are in the fixture");
    std::fs::write(&manifest, stripped).expect("write");
    let policy = write(tmp.path(), "p.yaml", "policy: 1\n");
    let out = cmd()
        .args(["run", "--format", "json", "--only", "methods.*", "--policy"])
        .arg(&policy)
        .arg(&dir)
        .output()
        .expect("runs");
    let v = stdout_json(&out);
    let case = |id: &str| {
        v["cases"]
            .as_array()
            .and_then(|a| a.iter().find(|c| c["id"] == id))
            .cloned()
            .unwrap_or_else(|| panic!("no {id} in {v}"))
    };
    let valid = case("methods.tool_valid_args[bookmarks.add]");
    assert_eq!(
        (&valid["status"], &valid["kind"]),
        (&serde_json::json!("skip"), &serde_json::json!("untestable")),
        "{valid}"
    );
    assert!(
        valid["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("examples:"),
        "{valid}"
    );
    let invalid = case("methods.tool_invalid_args[bookmarks.add]");
    assert_eq!(invalid["status"], "pass", "{invalid}");
    let reasons = v["certification"]["reasons"].to_string();
    assert_eq!(out.status.code(), Some(1), "{reasons}");
    assert!(
        reasons.contains("could not be tested")
            && reasons.contains("methods.tool_valid_args[bookmarks.add]"),
        "{reasons}"
    );
}
