//! What a new author meets on the command line in their first hour: hooks
//! called by name, a full agent context from `--agent`, an install that
//! ships only what the plugin needs and says how big it is, hints that are
//! complete, and a disabled installed copy that `call` refuses.

use std::path::Path;

use crate::support::host::fixture;
use assert_cmd::Command;
use serde_json::Value;

fn host_sim() -> Command {
    let mut c = Command::cargo_bin("kaged-host-sim").expect("binary");
    c.env_remove("KAGED_HOME").args(["--cage", "off"]);
    c
}

/// Run; (exit code, stdout, stderr).
fn run(c: &mut Command) -> (Option<i32>, String, String) {
    let out = c.output().expect("run");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_hook_is_called_by_its_short_name_with_a_generated_agent_context() {
    let dir = fixture("hooks-greeter");
    for name in ["on_session_start", "kaged.hook.on_session_start"] {
        let (code, out, err) = run(host_sim().arg("call").arg(&dir).arg(name).arg("--json"));
        assert_eq!(code, Some(0), "{name}: {err}");
        let answer: Value = serde_json::from_str(out.trim()).expect("json");
        assert_eq!(answer["inject"], "greetings from greeter", "{name}");
    }
    // A hook without params gets empty ones of its shape.
    let (code, _, err) = run(host_sim().arg("call").arg(&dir).arg("pre_compact"));
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn an_undeclared_name_is_answered_with_what_the_plugin_declares() {
    let (code, _, err) = run(host_sim()
        .arg("call")
        .arg(fixture("hooks-greeter"))
        .arg("session_start"));
    assert_eq!(code, Some(1), "{err}");
    // The host refuses the name before sending anything (the daemon does
    // not route undeclared names to a plugin).
    assert!(
        err.contains("method \"session_start\" is not declared by plugin \"hooks-greeter\""),
        "{err}"
    );
    assert!(
        err.contains("hint: hooks-greeter declares")
            && err.contains("hooks: on_session_start, on_session_idle"),
        "{err}"
    );
}

#[test]
fn agent_builds_a_full_context_with_generated_ids() {
    let (code, out, err) = run(host_sim()
        .arg("call")
        .arg(fixture("good"))
        .args(["good.echo", r#"{"text": "hi"}"#, "--json"])
        .args([
            "--agent",
            "primary.subagents.researcher",
            "--project",
            "proj_1",
        ]));
    assert_eq!(code, Some(0), "{err}");
    let answer: Value = serde_json::from_str(out.trim()).expect("json");
    let ctx = &answer["context"];
    assert_eq!(
        ctx["agent_path"], "primary.subagents.researcher",
        "{answer}"
    );
    assert_eq!(ctx["project_id"], "proj_1");
    assert!(
        ctx["session_id"]
            .as_str()
            .is_some_and(|s| s.starts_with("ses_cli_")),
        "{ctx}"
    );
    assert!(
        ctx["request_id"]
            .as_str()
            .is_some_and(|s| s.starts_with("req_cli_")),
        "{ctx}"
    );
    // --session without --agent is a usage error, as is --agent with --context.
    let (code, _, _) =
        run(host_sim()
            .arg("call")
            .arg(fixture("good"))
            .args(["status.get", "--session", "s"]));
    assert_eq!(code, Some(2));
}

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, body).expect("write");
}

#[test]
fn install_ships_only_what_the_plugin_needs_and_a_disabled_copy_is_refused() {
    let src = tempfile::tempdir().expect("tempdir");
    let store = tempfile::tempdir().expect("tempdir");
    let shell = fixture("shell-adapter");
    for f in ["kaged-plugin.yaml", "plugin.sh"] {
        std::fs::copy(shell.join(f), src.path().join(f)).expect("copy");
    }
    write(src.path(), ".git/HEAD", "ref: refs/heads/main\n");
    write(src.path(), "target/debug/big.rlib", &"x".repeat(1 << 20));
    write(src.path(), ".kagedignore", "*.log\n/target/\n");
    write(src.path(), "debug.log", "noise\n");
    write(src.path(), "README.md", "kept\n");

    let (code, out, err) = run(host_sim()
        .args(["plugin", "install"])
        .arg(src.path())
        .arg("--store")
        .arg(store.path())
        .arg("--yes"));
    assert_eq!(code, Some(0), "{err}");
    let copy = store.path().join("plugins").join("my-simple-adapter");
    assert!(
        out.contains(&format!("into {} (4 files,", copy.display())),
        "{out}"
    );
    let hint = format!(
        "→ enable with: kaged-host-sim plugin enable my-simple-adapter --store {}",
        store.path().display()
    );
    assert!(out.contains(&hint), "{out}");
    let mut shipped: Vec<String> = std::fs::read_dir(&copy)
        .expect("copy")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    shipped.sort();
    assert_eq!(
        shipped,
        [
            ".kagedignore",
            "README.md",
            "kaged-plugin.yaml",
            "plugin.sh"
        ]
    );

    // Disabled: the daemon would not start it, and neither does `call`.
    let (code, _, err) = run(host_sim().arg("call").arg(&copy).arg("status.get"));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("disabled") && err.contains("--force") && err.contains(&hint[17..]),
        "{err}"
    );
    let (code, _, err) = run(host_sim()
        .arg("call")
        .arg(&copy)
        .args(["status.get", "--force"]));
    assert_eq!(code, Some(0), "{err}");
    // Enabled (the hint's own command), it answers.
    let (code, _, err) = run(host_sim()
        .args(["plugin", "enable", "my-simple-adapter", "--store"])
        .arg(store.path()));
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = run(host_sim().arg("call").arg(&copy).arg("status.get"));
    assert_eq!(code, Some(0), "{err}");
}
