//! `run --attest` and `verify` (issue 46 item 4): a statement that
//! validates against its schema, that `verify` accepts for the directory
//! it certified and refuses for one with one byte changed or under
//! another policy.

mod support;

use std::path::Path;

use support::{cmd, workspace};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read") {
        let path = entry.expect("entry").path();
        let dest = to.join(path.file_name().expect("name"));
        if path.is_dir() {
            copy_dir(&path, &dest);
        } else {
            std::fs::copy(&path, &dest).expect("copy");
        }
    }
}

#[test]
fn a_statement_validates_and_verifies_only_the_directory_it_certified() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let plugin = tmp.path().join("python-notes");
    copy_dir(&workspace().join("examples/python-notes"), &plugin);
    let policy = tmp.path().join("registry.yaml");
    std::fs::write(&policy, "policy: 1\nname: registry\n").expect("write");
    let statement = tmp.path().join("statement.json");
    let out = cmd()
        .args(["run", "--format", "json", "--policy"])
        .arg(&policy)
        .arg("--attest")
        .arg(&statement)
        .arg(&plugin)
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = std::fs::read_to_string(&statement).expect("the statement");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let schema: serde_json::Value =
        serde_json::from_str(kaged_conformance::attest::PREDICATE_SCHEMA).expect("schema");
    let validator = jsonschema::validator_for(&schema).expect("compiles");
    let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{text}");
    assert_eq!(v["predicate"]["outcome"], "certified");
    assert_eq!(v["subject"][0]["name"], "py-notes@0.1.0", "{text}");
    assert_eq!(v["predicate"]["policy"]["name"], "registry");

    let verify = |dir: &Path, policy: &Path| {
        cmd()
            .arg("verify")
            .arg(&statement)
            .arg(dir)
            .arg("--policy")
            .arg(policy)
            .output()
            .expect("runs")
    };
    let ok = verify(&plugin, &policy);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(String::from_utf8_lossy(&ok.stdout).starts_with("verified: "));
    // The same directory elsewhere digests the same.
    let moved = tmp.path().join("elsewhere");
    copy_dir(&plugin, &moved);
    assert_eq!(verify(&moved, &policy).status.code(), Some(0));
    // One byte changed.
    let code = moved.join("plugin.py");
    let mut bytes = std::fs::read(&code).expect("read");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    std::fs::write(&code, bytes).expect("write");
    let changed = verify(&moved, &policy);
    assert_eq!(changed.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&changed.stderr)
            .contains("does not match the statement's subject py-notes@0.1.0"),
        "{}",
        String::from_utf8_lossy(&changed.stderr)
    );
    // Another policy.
    let other = tmp.path().join("other.yaml");
    std::fs::write(&other, "policy: 1\nrequire: should\n").expect("write");
    let wrong = verify(&plugin, &other);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("certified under policy registry"));
}
