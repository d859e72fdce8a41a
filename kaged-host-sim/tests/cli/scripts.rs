//! Script files (issue 31, steps as types): every script the repository
//! ships parses as the kind it is, and a step with no action, two actions,
//! an action of the other kind or a key its action does not take is
//! refused, naming the step, by the library and by `session --script`.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use kaged_host_engine::scenario::{
    ProjectScript, ProjectStep, Script, ScriptError, SessionStep, StepError,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The YAML blocks of a Markdown file that are scripts (`steps:` at the
/// start of a line).
fn yaml_scripts(markdown: &str) -> Vec<String> {
    markdown
        .split("```yaml\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .filter(|b| b.lines().any(|l| l == "steps:"))
        .map(str::to_string)
        .collect()
}

/// The YAML blocks of a Rust file's `//!` docs that are scripts.
fn doc_scripts(rust: &str) -> Vec<String> {
    let docs: String = rust
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| format!("{}\n", l.strip_prefix(' ').unwrap_or(l)))
        .collect();
    yaml_scripts(&docs)
}

const SESSION_SCRIPTS: &[&str] = &[
    "kaged-host-sim/tests/fixtures/scripts/good.yaml",
    "kaged-host-sim/tests/fixtures/scripts/failing.yaml",
    "kaged-host-sim/tests/fixtures/scripts/golden.yaml",
    "examples/memory-markdown/demo.yaml",
];

const PROJECT_SCRIPTS: &[&str] = &[
    "kaged-host-sim/tests/fixtures/scripts/firing-compact.yaml",
    "kaged-host-sim/tests/fixtures/scripts/firing-failing.yaml",
    "examples/demo-project/script.yaml",
];

fn is_project(text: &str) -> bool {
    ["- start_session:", "- idle:", "- compact:"]
        .iter()
        .any(|a| text.contains(a))
}

#[test]
fn every_shipped_script_parses_as_its_kind_and_not_as_the_other() {
    let mut texts: Vec<(String, String)> = SESSION_SCRIPTS
        .iter()
        .chain(PROJECT_SCRIPTS)
        .map(|p| (p.to_string(), read(p)))
        .collect();
    for md in ["docs/authoring.md", "docs/conformance.md", "README.md"] {
        for (i, b) in yaml_scripts(&read(md)).into_iter().enumerate() {
            texts.push((format!("{md} block {i}"), b));
        }
    }
    for (i, b) in doc_scripts(&read("kaged-host-sim/engine/src/scenario/mod.rs"))
        .into_iter()
        .enumerate()
    {
        texts.push((format!("scenario/mod.rs block {i}"), b));
    }
    assert!(texts.len() >= 11, "{} scripts", texts.len());
    let (mut session, mut project) = (0, 0);
    for (name, text) in &texts {
        if is_project(text) {
            let s = ProjectScript::from_yaml_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!s.steps.is_empty(), "{name}");
            let err = Script::from_yaml_str(text).expect_err(name);
            assert!(matches!(err, ScriptError::Step { .. }), "{name}: {err}");
            project += 1;
        } else {
            let s = Script::from_yaml_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!s.steps.is_empty(), "{name}");
            let err = ProjectScript::from_yaml_str(text).expect_err(name);
            assert!(matches!(err, ScriptError::Step { .. }), "{name}: {err}");
            session += 1;
        }
    }
    assert!(
        session >= 6 && project >= 4,
        "{session} session, {project} project"
    );
}

#[test]
fn a_script_reads_back_what_it_writes() {
    for path in SESSION_SCRIPTS {
        let script = Script::from_yaml_str(&read(path)).expect(path);
        let text = serde_saphyr::to_string(&script).expect("serializes");
        assert_eq!(Script::from_yaml_str(&text).expect(path), script, "{text}");
    }
    for path in PROJECT_SCRIPTS {
        let script = ProjectScript::from_yaml_str(&read(path)).expect(path);
        let text = serde_saphyr::to_string(&script).expect("serializes");
        assert_eq!(
            ProjectScript::from_yaml_str(&text).expect(path),
            script,
            "{text}"
        );
    }
}

#[test]
fn each_step_is_its_action() {
    let s = Script::from_yaml_str(&read(SESSION_SCRIPTS[0])).expect("good.yaml");
    let actions: Vec<&str> = s.steps.iter().map(SessionStep::action).collect();
    assert_eq!(
        actions,
        ["call", "call", "call", "wait", "expect_audit", "notify"]
    );
    let p = ProjectScript::from_yaml_str(&read(PROJECT_SCRIPTS[0])).expect("firing");
    let actions: Vec<&str> = p.steps.iter().map(ProjectStep::action).collect();
    assert_eq!(
        actions,
        [
            "start_session",
            "idle",
            "compact",
            "compact",
            "expect_audit"
        ]
    );
}

/// The session script's error: its index, and its message.
fn session_error(text: &str) -> (usize, StepError, String) {
    match Script::from_yaml_str(text) {
        Err(e @ ScriptError::Step { .. }) => {
            let line = e.to_string();
            let ScriptError::Step { index, error } = e else {
                unreachable!()
            };
            (index, error, line)
        }
        other => panic!("not a step error: {other:?}"),
    }
}

const SESSION_ALLOWED: &str =
    "needs exactly one of `call`, `calls`, `notify`, `wait`, `expect_audit`";

#[test]
fn a_step_with_two_actions_is_refused_by_index() {
    let (index, error, line) =
        session_error("steps:\n  - call: a.b\n  - call: a.b\n    notify: c.d\n");
    assert_eq!(index, 2);
    assert_eq!(error.action, None);
    assert_eq!(
        line,
        format!("invalid script: step 2 {SESSION_ALLOWED}; it has `call`, `notify`")
    );
}

#[test]
fn a_step_with_no_action_is_refused_by_index() {
    let (index, _, line) = session_error("steps:\n  - call: a.b\n  - wait: x\n  - params: {}\n");
    assert_eq!(index, 3);
    assert_eq!(
        line,
        format!("invalid script: step 3 {SESSION_ALLOWED}; it has none (keys: `params`)")
    );
    // A misspelt action is a step with none, its keys listed.
    let (index, _, line) = session_error("steps:\n  - cal: a.b\n");
    assert_eq!(index, 1);
    assert!(line.ends_with("it has none (keys: `cal`)"), "{line}");
}

#[test]
fn a_project_action_in_a_session_script_is_refused_by_index() {
    let (index, _, line) = session_error("steps:\n  - call: a.b\n  - start_session: primary\n");
    assert_eq!(index, 2);
    assert_eq!(
        line,
        format!(
            "invalid script: step 2 {SESSION_ALLOWED}; `start_session` is a project step (session --project FILE)"
        )
    );
    let err = ProjectScript::from_yaml_str("steps:\n  - idle: primary\n  - wait: x\n")
        .expect_err("a session action");
    assert_eq!(
        err.to_string(),
        "invalid script: step 2 needs exactly one of `start_session`, `idle`, `compact`, `expect_audit`; `wait` is a plugin-session step (session DIR, without --project)"
    );
}

#[test]
fn an_unknown_key_is_refused_naming_the_step_and_its_action() {
    let (index, error, line) =
        session_error("steps:\n  - notify: a\n  - call: a.b\n    timeout_ms: 5\n");
    assert_eq!(index, 2);
    assert_eq!(error.action.as_deref(), Some("call"));
    assert!(
        line.starts_with("invalid script: step 2 (call): unknown field `timeout_ms`, expected one of `call`, `params`, `context`, `expect`"),
        "{line}"
    );
    // A project key on a session step, and a session key on a project step.
    let (index, _, line) = session_error("steps:\n  - call: a.b\n    session_id: s\n");
    assert_eq!(index, 1);
    assert!(
        line.contains("(call): unknown field `session_id`"),
        "{line}"
    );
    let err = ProjectScript::from_yaml_str(
        "steps:\n  - start_session: p\n  - compact: p\n    expect: {error: -32000}\n",
    )
    .expect_err("no error code in a project expectation");
    assert!(
        err.to_string()
            .starts_with("invalid script: step 2 (compact): unknown field `error`"),
        "{err}"
    );
    // A `calls` entry is a call, named by its index too.
    let (index, _, line) =
        session_error("steps:\n  - calls:\n      - {call: a}\n      - {call: b, notify: x}\n");
    assert_eq!(index, 1);
    assert!(
        line.contains("step 1 (calls): entry 2: unknown field `notify`"),
        "{line}"
    );
}

#[test]
fn a_step_that_is_not_a_map_and_a_script_without_steps_are_refused() {
    let (index, _, line) = session_error("steps:\n  - call: a\n  - ping\n");
    assert_eq!(index, 2);
    assert!(line.contains("it is not a map but \"ping\""), "{line}");
    let err = Script::from_yaml_str("step:\n  - call: a\n").expect_err("no steps");
    assert!(matches!(err, ScriptError::Syntax(_)), "{err}");
    // Broken YAML: where, on one line, not the parser's quoted snippet.
    let err = Script::from_yaml_str("steps:\n  - call: [\n").expect_err("broken YAML");
    assert_eq!(
        err.to_string(),
        "invalid script: line 2 column 11: unclosed bracket '[' (in `- call: [`)"
    );
}

#[test]
fn serde_reads_a_script_naming_the_step() {
    let err = serde_json::from_str::<Script>(r#"{"steps": [{"call": "a"}, {"idle": "p"}]}"#)
        .expect_err("a project action");
    assert!(
        err.to_string()
            .starts_with(&format!("step 2 {SESSION_ALLOWED}")),
        "{err}"
    );
    let script: ProjectScript =
        serde_json::from_str(r#"{"steps": [{"idle": "p", "session_id": "s"}]}"#).expect("parses");
    assert!(
        matches!(&script.steps[0], ProjectStep::Idle(i) if i.session_id.as_deref() == Some("s"))
    );
}

fn cli() -> Command {
    Command::cargo_bin("kaged-host-sim").expect("binary built")
}

#[test]
fn session_refuses_a_bad_script_naming_the_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("bad.yaml");
    std::fs::write(
        &script,
        "steps:\n  - call: good.echo\n  - compact: primary\n",
    )
    .expect("write");
    let out = cli()
        .args(["--time-scale", "1", "session"])
        .arg(crate::support::host::fixture("good"))
        .arg("--script")
        .arg(&script)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("step 2 needs exactly one of `call`")
            && err.contains("`compact` is a project step"),
        "{err}"
    );
}
