//! Golden files from the command line: `session --golden` against a
//! Python plugin, a deliberate change failing with a diff that names the
//! changed field, `--update` keeping markers, and `--transcript-form
//! normal` giving the same file run after run.

use std::path::{Path, PathBuf};

use crate::support::host::fixture;
use assert_cmd::Command;

fn cli() -> Command {
    let mut c = Command::cargo_bin("kaged-host-sim").expect("binary");
    c.timeout(std::time::Duration::from_secs(60));
    c
}

fn fixtures(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// `session DIR --script golden.yaml --golden GOLDEN`, comparing unless
/// the caller adds `--update` or `KAGED_UPDATE_GOLDEN=1`.
fn session_cmd(dir: &Path, golden: &Path) -> Command {
    let mut c = cli();
    c.arg("session")
        .arg(dir)
        .arg("--script")
        .arg(fixtures("scripts/golden.yaml"))
        .arg("--golden")
        .arg(golden)
        .env_remove("KAGED_UPDATE_GOLDEN");
    c
}

fn session(dir: &Path, golden: &Path) -> std::process::Output {
    session_cmd(dir, golden).output().expect("runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy");
        }
    }
}

/// A copy of the (staged, self-contained) `good` fixture whose
/// `good.echo` answers `echoed` where the original answers `echo`.
fn changed_good(root: &Path) -> PathBuf {
    let dir = root.join("good");
    copy_dir(&fixture("good"), &dir);
    let plugin = dir.join("plugin.py");
    let code = std::fs::read_to_string(&plugin).expect("read");
    let changed = code.replace(r#"return {"echo": params"#, r#"return {"echoed": params"#);
    assert_ne!(code, changed, "the fixture's echo answer moved");
    std::fs::write(&plugin, changed).expect("write");
    dir
}

#[test]
fn a_python_plugin_matches_its_golden_transcript() {
    let out = session(&fixture("good"), &fixtures("golden/good.jsonl"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("good.jsonl: same"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_changed_answer_fails_with_a_diff_naming_the_field() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = changed_good(tmp.path());
    let out = session(&dir, &fixtures("golden/good.jsonl"));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("good.jsonl: differs"), "{stdout}");
    assert!(
        stdout.contains("--- golden") && stdout.contains("+++ actual"),
        "{stdout}"
    );
    let diff_line = |sign: char, text: &str| {
        stdout
            .lines()
            .any(|l| l.strip_prefix(sign).is_some_and(|rest| rest.trim() == text))
    };
    // Each change is named by its step, its message and its JSON path.
    assert!(
        stdout.contains(
            "step 1 (`good.echo`), message 7 (plugin>host: the answer to host request 3, `good.echo`):\n  \
             $.msg.result.echo: only in the golden file ({\"text\":\"hi\"})\n  \
             $.msg.result.echoed: only in this run ({\"text\":\"hi\"})"
        ),
        "{stdout}"
    );
    assert!(diff_line('-', r#""echo": {"#), "{stdout}");
    assert!(diff_line('+', r#""echoed": {"#), "{stdout}");
    // Only the changed answer differs: markers and paths match.
    let changed = stdout.lines().filter(|l| l.starts_with(['-', '+'])).count();
    assert_eq!(
        changed, 4,
        "two header lines and one changed field:\n{stdout}"
    );
}

#[test]
fn update_writes_the_golden_file_and_keeps_its_markers() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let golden = tmp.path().join("good.jsonl");
    let out = session(&fixture("good"), &golden);
    assert_eq!(out.status.code(), Some(1), "a missing golden file fails");
    assert!(text(&out.stdout).contains("missing (run with --update"));
    let out = session_cmd(&fixture("good"), &golden)
        .arg("--update")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let written = std::fs::read_to_string(&golden).expect("written");
    let committed = std::fs::read_to_string(fixtures("golden/good.jsonl")).expect("read");
    // The committed file marks the plugin's version "[re:...]"; a plain
    // update writes the value, an update of the committed file keeps it.
    assert!(!written.contains("[re:"), "{written}");
    std::fs::write(&golden, &committed).expect("copy");
    let out = session_cmd(&fixture("good"), &golden)
        .env("KAGED_UPDATE_GOLDEN", "1")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&golden).expect("read"), committed);
}

/// A run in which a step failed is never written as the golden file,
/// with `--update` or `KAGED_UPDATE_GOLDEN=1`: the file keeps what it was.
#[test]
fn update_does_not_write_a_run_whose_step_failed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let golden = tmp.path().join("good.jsonl");
    let script = tmp.path().join("failing.yaml");
    std::fs::write(
        &script,
        "steps:\n  - call: ping\n  - call: good.echo\n    params: {text: hi}\n    context: {operator_id: operator, project_id: music, agent_path: primary, session_id: ses_1, request_id: req_1}\n    expect: {result: {echo: {text: bye}}}\n",
    )
    .expect("script");
    std::fs::write(&golden, "kept\n").expect("golden");
    for update in [&["--update"][..], &[][..]] {
        let mut c = cli();
        c.arg("session")
            .arg(fixture("good"))
            .arg("--script")
            .arg(&script)
            .arg("--golden")
            .arg(&golden)
            .args(update);
        if update.is_empty() {
            c.env("KAGED_UPDATE_GOLDEN", "1");
        } else {
            c.env_remove("KAGED_UPDATE_GOLDEN");
        }
        let out = c.output().expect("runs");
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{stdout}");
        assert!(stdout.contains("1 failed"), "{stdout}");
        assert!(
            stdout.contains(&format!(
                "golden {}: not written: a step failed",
                golden.display()
            )),
            "{stdout}"
        );
        assert_eq!(std::fs::read_to_string(&golden).expect("read"), "kept\n");
    }
}

#[test]
fn a_normal_form_transcript_is_the_same_file_run_after_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut files = Vec::new();
    for i in 0..2 {
        let file = tmp.path().join(format!("t{i}.jsonl"));
        let out = cli()
            .arg("--transcript")
            .arg(&file)
            .args(["--transcript-form", "normal", "session"])
            .arg(fixture("good"))
            .arg("--script")
            .arg(fixtures("scripts/golden.yaml"))
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
        files.push(std::fs::read_to_string(&file).expect("written"));
    }
    assert_eq!(files[0], files[1]);
    assert!(
        files[0].lines().all(|l| !l.contains("\"seq\"")),
        "no seq in the normal form"
    );
}
