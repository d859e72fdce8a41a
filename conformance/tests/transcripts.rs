//! `--transcript-dir DIR --transcript-form normal`: every case's
//! transcript in the normal form (`kaged_host_core::normal`), the same
//! files run after run.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use support::{cmd, own_fixture};

fn run(dir: &Path, form: &str) {
    let out = cmd()
        .args(["run", "--format", "json", "--time-scale", "1"])
        .args(["--transcript-form", form, "--transcript-dir"])
        .arg(dir)
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The case transcripts (`<case id>.jsonl`, not the stored run's files).
fn cases(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .expect("read")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            !matches!(name, "audit.jsonl" | "wire.jsonl" | "run.json")
        })
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("read"))
        })
        .collect()
}

#[test]
fn normal_form_case_transcripts_are_the_same_run_after_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run(&a, "normal");
    run(&b, "normal");
    let (first, second) = (cases(&a), cases(&b));
    assert!(first.len() > 40, "one file per case: {}", first.len());
    for (name, text) in &first {
        assert_eq!(Some(text), second.get(name), "{name} differs between runs");
        assert!(
            !text.contains("\"seq\""),
            "{name}: no seq in the normal form"
        );
    }
    let ping = &first["protocol.ping.jsonl"];
    assert!(ping.contains(r#""method":"ping""#), "{ping}");
}

#[test]
fn a_transcript_form_needs_a_transcript_dir_and_a_known_form() {
    let out = cmd()
        .args([
            "run",
            "--transcript-form",
            "pretty",
            "--transcript-dir",
            "x",
        ])
        .arg(own_fixture("conforming"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("raw, normal"), "{err}");
}
