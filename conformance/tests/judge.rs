//! `kaged-conformance judge DIR`: a stored run (`run --transcript-dir`)
//! judged again offline, through the binary. That `judge` agrees with
//! `run` on every fixture of the fail-proof table is checked by each proof
//! (`support::proofs::judge_agrees`).

mod support;

use serde_json::Value;
use support::{cmd, own_fixture, stdout_json};

#[test]
fn judge_reads_a_stored_run_back_and_exits_as_the_run_did() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let stored = tmp.path().join("run");
    let out = cmd()
        .args([
            "run",
            "--format",
            "json",
            "--time-scale",
            "1",
            "--transcript-dir",
        ])
        .arg(&stored)
        .arg(own_fixture("wire-strays"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1), "wire-strays fails MUSTs");
    let run = stdout_json(&out);
    for file in ["run.json", "audit.jsonl", "wire.jsonl"] {
        assert!(stored.join(file).is_file(), "{file} is stored");
    }
    let out = cmd()
        .args(["judge", "--format", "json"])
        .arg(&stored)
        .output()
        .expect("judges");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let judged = stdout_json(&out);
    assert_eq!(judged["plugin"], run["plugin"]);
    let case = |v: &Value, id: &str| {
        v["cases"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["id"] == id).cloned())
            .unwrap_or_else(|| panic!("{id} reported"))
    };
    for id in [
        "protocol.no_answer_to_notifications",
        "protocol.no_unknown_response_ids",
        "protocol.no_unprompted_batches",
    ] {
        let (j, r) = (case(&judged, id), case(&run, id));
        assert_eq!(j["status"], "fail", "{id}");
        assert_eq!(
            (&j["detail"], &j["audit_events"]),
            (&r["detail"], &r["audit_events"])
        );
    }
    let ping = case(&judged, "protocol.ping");
    assert_eq!(ping["status"], "skip");
    assert!(ping["detail"]
        .as_str()
        .unwrap_or_default()
        .contains("judged live only"));
    // Selection applies as in a run: nothing judged fails, exit 0.
    let out = cmd()
        .args(["judge", "--format", "tap", "--skip", "protocol.no_*"])
        .arg(&stored)
        .output()
        .expect("judges");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn judge_without_a_stored_run_exits_2_naming_what_is_missing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = cmd().arg("judge").arg(tmp.path()).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("run.json") && err.contains("--transcript-dir"),
        "{err}"
    );
    std::fs::write(tmp.path().join("run.json"), r#"{"format": 99}"#).expect("write");
    let out = cmd().arg("judge").arg(tmp.path()).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("format 99 is not 1"), "{err}");
}
