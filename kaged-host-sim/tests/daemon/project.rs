//! `up --project FILE`: agent contexts for `?agent=PATH` calls and knobs,
//! each agent with its own config, put in force before its calls.

use std::ffi::OsStr;

use serde_json::Value;

use crate::harness::{plugins, Up};

const RESEARCHER: &str = "primary.subagents.researcher";

fn project_file() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/projects/daemon-agents.yaml")
}

/// The project id of `up`'s `project: ID (...)` line.
fn project_id(line: &str) -> String {
    line.trim_start_matches("project: ")
        .split(" (")
        .next()
        .unwrap_or_default()
        .to_string()
}

fn knob(up: &Up, agent: Option<&str>) -> Value {
    let q = agent.map(|a| format!("?agent={a}")).unwrap_or_default();
    let (status, body) = up.http("GET", &format!("/api/v1/plugins/knobs/knobs{q}"), None);
    assert_eq!(status, 200, "{body}");
    let knobs = body["knobs"].as_array().cloned().unwrap_or_default();
    knobs
        .into_iter()
        .find(|k| k["name"] == "retain_every")
        .map(|k| k["value"].clone())
        .unwrap_or(Value::Null)
}

/// The `retain_every` of the last config the plugin received.
fn last_seen(up: &Up, agent: Option<&str>) -> Value {
    let q = agent.map(|a| format!("?agent={a}")).unwrap_or_default();
    let (status, body) = up.http(
        "POST",
        &format!("/api/v1/plugins/knobs/call/knobs.seen{q}"),
        None,
    );
    assert_eq!(status, 200, "{body}");
    body["configs"]
        .as_array()
        .and_then(|c| c.last())
        .map(|c| c["retain_every"].clone())
        .unwrap_or(Value::Null)
}

#[test]
fn each_agent_has_its_config_and_its_context() {
    let dir = plugins(&["knobs", "good"]);
    // A copy: a knob write for an agent is written into the project file.
    let copy = tempfile::tempdir().expect("tempdir");
    let file = copy.path().join("project.yaml");
    std::fs::copy(project_file(), &file).expect("copy the project");
    let mut up = Up::start_with(dir.path(), &[OsStr::new("--project"), file.as_os_str()]);
    let line = up.wait_line(|l| l.starts_with("project: "));
    assert!(
        line.ends_with(&format!("agents: primary, {RESEARCHER}")),
        "{line}"
    );
    let project_id = project_id(&line);
    up.wait_plugin("knobs", |p| p["state"] == "running");

    // The knob values of each context.
    assert_eq!(knob(&up, None), 3);
    assert_eq!(knob(&up, Some("primary")), 5);
    assert_eq!(knob(&up, Some(RESEARCHER)), 9);

    // A call for an agent runs with that agent's config and context; a
    // daemon-level call puts the daemon's config back.
    assert_eq!(last_seen(&up, Some("primary")), 5);
    assert_eq!(last_seen(&up, Some(RESEARCHER)), 9);
    assert_eq!(last_seen(&up, None), 3);
    let called: Vec<Value> = up
        .audit()
        .into_iter()
        .filter(|r| r["event"] == "plugin.method_called" && r["method"] == "knobs.seen")
        .collect();
    assert_eq!(called[0]["project"], project_id.as_str(), "{called:?}");
    assert_eq!(called[2]["project"], Value::Null, "{called:?}");

    // A knob write for one agent changes that agent only.
    let (status, body) = up.http(
        "PUT",
        "/api/v1/plugins/knobs/knobs/retain_every?agent=primary",
        Some(r#"{"value": 11}"#),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["config"]["retain_every"], 11);
    assert_eq!(body["agent_path"], "primary");
    assert_eq!(knob(&up, Some("primary")), 11);
    assert_eq!(knob(&up, Some(RESEARCHER)), 9);
    assert_eq!(knob(&up, None), 3);
    let writes: Vec<Value> = up
        .audit()
        .into_iter()
        .filter(|r| r["event"] == "plugin.knob_write")
        .collect();
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0]["agent_path"], "primary");
    // plugin-host.md § Plugin knob schema: "Knob changes write to
    // project.yaml's AgentSpec.plugins.<name>.config": the primary's
    // declaration holds the new value, every other line is as it was.
    let saved = std::fs::read_to_string(&file).expect("the project file");
    let original = std::fs::read_to_string(project_file()).expect("the fixture");
    assert_eq!(
        saved,
        original.replacen(
            "      config:\n        retain_every: 5\n",
            "      config: {\"retain_every\":11}\n",
            1
        )
    );

    // Bad agents, named.
    let (status, body) = up.http("GET", "/api/v1/plugins/knobs/knobs?agent=nope", None);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("unknown_agent"))
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("primary"),
        "{body}"
    );
    let (status, body) = up.http(
        "POST",
        "/api/v1/plugins/good/call/env.get?agent=primary",
        None,
    );
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_active")),
        "{body}"
    );
}

#[test]
fn a_project_that_does_not_resolve_is_refused_by_name() {
    let dir = plugins(&["good"]);
    let file = project_file();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kaged-host-sim"))
        .args(["--cage", "off", "up", "--plugins"])
        .arg(dir.path())
        .arg("--project")
        .arg(&file)
        .output()
        .expect("run up");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("daemon-agents.yaml") && err.contains("knobs"),
        "{err}"
    );

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kaged-host-sim"))
        .args(["--cage", "off", "up", "--plugins"])
        .arg(dir.path())
        .args(["--project", "/no/such/project.yaml"])
        .output()
        .expect("run up");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no such project file: /no/such/project.yaml"),
        "{err}"
    );
}

/// `up --project`: every plugin the project uses hears of it with
/// `projects.activated {project, config}` right after its first config,
/// at its start and at every restart (a new process); a plugin the project
/// does not use hears nothing of it.
#[test]
fn a_plugin_the_project_uses_is_sent_projects_activated_at_every_start() {
    let dir = plugins(&["knobs", "good"]);
    let mut up = Up::start_with(
        dir.path(),
        &[OsStr::new("--project"), project_file().as_os_str()],
    );
    let line = up.wait_line(|l| l.starts_with("project: "));
    let project_id = project_id(&line);
    up.wait_plugin("knobs", |p| p["state"] == "running");
    up.wait_plugin("good", |p| p["state"] == "running");
    let activated = |up: &Up| {
        let (status, body) = up.http("POST", "/api/v1/plugins/knobs/call/knobs.seen", None);
        assert_eq!(status, 200, "{body}");
        body["activated"].clone()
    };
    // The project's id and the primary's config (its declared value over
    // the schema's defaults).
    let want = activated(&up);
    assert_eq!(want.as_array().map(Vec::len), Some(1), "{want}");
    assert_eq!(want[0]["project"], project_id.as_str(), "{want}");
    assert_eq!(want[0]["config"]["retain_every"], 5, "{want}");
    let (status, body) = up.http("POST", "/api/v1/plugins/knobs/restart", None);
    assert_eq!(status, 200, "{body}");
    up.wait_plugin("knobs", |p| p["state"] == "running" && p["restarts"] == 1);
    assert_eq!(activated(&up), want, "the new process is told too");
    let told: Vec<Value> = up
        .audit()
        .into_iter()
        .filter(|r| r["event"] == "plugin.method_called" && r["method"] == "projects.activated")
        .collect();
    assert_eq!(told.len(), 2, "{told:?}");
    assert!(told.iter().all(|r| r["plugin"] == "knobs"), "{told:?}");
    // Unloaded at shutdown: `projects.deactivated` before the stop.
    assert_eq!(up.signal_and_wait(rustix::process::Signal::INT), Some(0));
    let knobs: Vec<Value> = up
        .audit()
        .into_iter()
        .filter(|r| r["plugin"] == "knobs")
        .collect();
    let at = |pred: &dyn Fn(&Value) -> bool| knobs.iter().rposition(pred);
    let deactivated =
        at(&|r| r["event"] == "plugin.method_called" && r["method"] == "projects.deactivated");
    let stopped = at(&|r| r["event"] == "plugin.stopped");
    assert!(deactivated.is_some() && deactivated < stopped, "{knobs:?}");
    let good_told = up.audit().iter().any(|r| {
        r["plugin"] == "good"
            && r["method"]
                .as_str()
                .is_some_and(|m| m.starts_with("projects."))
    });
    assert!(
        !good_told,
        "a plugin the project does not use hears nothing of it"
    );
}

#[test]
fn without_a_project_a_required_system_field_keeps_the_project_side_defaults() {
    // ADDENDUM §16: the merged config holds the defaults of both schemas.
    // A system-side field that is required and has no default cannot be
    // filled without the operator's config: the plugin still gets every
    // project-side default, not `{}`.
    let dir = tempfile::tempdir().expect("tempdir");
    // A copy of the staged fixture (its `_lib` inside: the cage shows a
    // plugin nothing outside its directory).
    fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("read_dir") {
            let path = entry.expect("entry").path();
            let target = to.join(path.file_name().expect("name"));
            if path.is_dir() {
                copy_tree(&path, &target);
            } else {
                std::fs::copy(&path, &target).expect("copy");
            }
        }
    }
    let copy = dir.path().join("knobs");
    copy_tree(&crate::support::host::fixture("knobs"), &copy);
    let manifest = copy.join("kaged-plugin.yaml");
    let text = std::fs::read_to_string(&manifest).expect("read");
    let required = text.replace(
        "    api_token: { type: string }\n",
        "    api_token: { type: string }\n  required: [api_token]\n",
    );
    assert_ne!(text, required);
    std::fs::write(&manifest, required).expect("write");
    let up = Up::start(dir.path());
    up.wait_plugin("knobs", |p| p["state"] == "running");
    let (status, body) = up.http("POST", "/api/v1/plugins/knobs/call/knobs.seen", None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["configs"][0],
        serde_json::json!({"recall_budget": "mid", "retain_every": 3, "store": "config:/memory", "label": "x"}),
        "{body}"
    );
    // The merged config broke the system schema: audited, once, by side.
    let failed: Vec<_> = up
        .audit()
        .into_iter()
        .filter(|r| r["event"] == "plugin.config_validation_failed")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["plugin"], "knobs");
    assert_eq!(failed[0]["side"], "system", "{failed:?}");
    assert!(
        failed[0]["errors"].to_string().contains("api_token"),
        "{failed:?}"
    );
}
