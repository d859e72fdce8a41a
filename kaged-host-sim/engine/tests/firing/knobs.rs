//! Operator knob writes (plugin-host.md § Plugin knob schema): bounds and
//! schema checked, `config.update` sent, `plugin.knob_write` audited; a
//! refused write changes nothing.

use std::collections::BTreeMap;

use crate::support::host::*;
use kaged_host_core::AuditLog;
use kaged_host_engine::agents::Project;
use kaged_host_engine::{AgentHost, KnobWriteError, PluginDirs};
use serde_json::{json, Value};

async fn start() -> (AgentHost, AuditLog) {
    let yaml = "primary:\n  plugins:\n    tuned:\n      package: \"@kaged/knobs\"\n      config:\n        recall_budget: low\n";
    let project = Project::from_yaml_str(yaml, "project.yaml").expect("project");
    let dirs = PluginDirs::Map(BTreeMap::from([(
        "@kaged/knobs".to_string(),
        fixture("knobs"),
    )]));
    let (host, audit, _) = host(EASY);
    let agents = AgentHost::start(host, &project, &dirs)
        .await
        .expect("start");
    (agents, audit)
}

/// Every config the plugin accepted, in order.
async fn seen(agents: &AgentHost) -> Vec<Value> {
    let s = agents.plugin("knobs").expect("session");
    let r = s
        .call("knobs.seen", Some(json!({})), None)
        .await
        .expect("knobs.seen");
    r["configs"].as_array().cloned().unwrap_or_default()
}

async fn stop(agents: AgentHost) {
    let pids = agents.pids();
    agents.shutdown().await;
    pids.into_iter().for_each(assert_group_gone);
}

#[tokio::test]
async fn a_knob_write_sends_the_merged_config_and_is_audited() {
    let (mut agents, audit) = start().await;
    let first = seen(&agents).await;
    assert_eq!(first.len(), 1, "the launch config: {first:?}");
    assert_eq!(first[0]["recall_budget"], "low");

    let w = agents
        .write_knob("primary", "tuned", "recall_budget", json!("high"))
        .await
        .expect("write");
    assert_eq!(w.field, "recall_budget");
    let expected = json!({"recall_budget": "high", "retain_every": 3, "store": "config:/memory", "label": "x"});
    assert_eq!(Value::Object(w.config.clone()), expected);
    assert_eq!(seen(&agents).await.last(), Some(&expected));
    let event = one(&audit, "plugin.knob_write");
    assert_eq!(event.get("knob"), &json!("recall_budget"));
    assert_eq!(event.get("agent_path"), &json!("primary"));
    assert_eq!(event.get("request_id"), &json!(w.request_id));
    assert_eq!(event.plugin, "knobs");

    // By manifest name too; the previous write stays in force.
    agents
        .write_knob("primary", "knobs", "store", json!("project:/mem"))
        .await
        .expect("path knob");
    let last = seen(&agents).await.pop().expect("a config");
    assert_eq!(
        (last["recall_budget"].as_str(), last["store"].as_str()),
        (Some("high"), Some("project:/mem"))
    );
    stop(agents).await;
}

#[tokio::test]
async fn values_outside_the_knob_bounds_or_the_schema_are_refused_before_the_plugin_sees_them() {
    let (mut agents, audit) = start().await;
    for (knob, value, why) in [
        ("retain_every", json!(25), "above max 20"),
        ("retain_every", json!(2.5), "not an integer"),
        ("recall_budget", json!("huge"), "not one of"),
        ("store", json!("/etc/passwd"), "does not start with one of"),
        ("recall_budget", json!(true), "not a valid enum value"),
    ] {
        match agents
            .write_knob("primary", "tuned", knob, value.clone())
            .await
        {
            Err(KnobWriteError::OutOfBounds { reason, .. }) => {
                assert!(reason.contains(why), "{knob}={value}: {reason}")
            }
            other => panic!("{knob}={value}: expected OutOfBounds, got {other:?}"),
        }
    }
    // Within the knob's bounds (a text knob without max_length) but not the schema's maxLength.
    match agents
        .write_knob("primary", "tuned", "label", json!("far too long"))
        .await
    {
        Err(KnobWriteError::InvalidConfig { errors, .. }) => {
            assert!(errors[0].contains("/label"), "{errors:?}")
        }
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
    let failed = one(&audit, "plugin.config_validation_failed");
    assert_eq!(failed.get("side"), &json!("project"));
    assert_eq!(failed.get("knob"), &json!("label"));
    let e = agents
        .write_knob("primary.subagents.nobody", "tuned", "label", json!("x"))
        .await
        .expect_err("refused");
    assert!(
        matches!(&e, KnobWriteError::UnknownAgent(path) if path == "primary.subagents.nobody"),
        "{e:?}"
    );
    let e = agents
        .write_knob("primary", "other", "label", json!("x"))
        .await
        .expect_err("refused");
    assert!(
        matches!(&e, KnobWriteError::NotDeclared { agent_path, plugin }
            if agent_path == "primary" && plugin == "other"),
        "{e:?}"
    );
    let e = agents
        .write_knob("primary", "tuned", "nope", json!("x"))
        .await
        .expect_err("refused");
    assert!(
        matches!(&e, KnobWriteError::UnknownKnob { plugin, knob }
            if plugin == "knobs" && knob == "nope"),
        "{e:?}"
    );
    assert_eq!(
        seen(&agents).await.len(),
        1,
        "only the launch config reached the plugin"
    );
    assert!(audit.of(kaged_host_core::AuditEvent::KnobWrite).is_empty());
    stop(agents).await;
}

#[tokio::test]
async fn a_config_the_plugin_refuses_leaves_the_previous_one_in_force() {
    let (mut agents, audit) = start().await;
    let e = agents
        .write_knob("primary", "tuned", "retain_every", json!(13))
        .await
        .expect_err("refused");
    assert!(matches!(e, KnobWriteError::Rejected { .. }), "{e}");
    assert!(audit.of(kaged_host_core::AuditEvent::KnobWrite).is_empty());
    agents
        .write_knob("primary", "tuned", "retain_every", json!(4))
        .await
        .expect("accepted");
    agents
        .write_knob("primary", "tuned", "recall_budget", json!("mid"))
        .await
        .expect("accepted");
    let last = seen(&agents).await.pop().expect("a config");
    assert_eq!(
        (
            last["retain_every"].as_i64(),
            last["recall_budget"].as_str()
        ),
        (Some(4), Some("mid"))
    );
    assert_eq!(audit.of(kaged_host_core::AuditEvent::KnobWrite).len(), 2);
    stop(agents).await;
}

#[tokio::test]
async fn a_path_knob_that_must_exist_is_checked_on_write() {
    // ADDENDUM §16: `must_exist` is checked on write, under the operator's
    // config root (`config:/`) and the project root (`project:/`).
    let plugin = tempfile::tempdir().expect("plugin dir");
    for entry in std::fs::read_dir(fixture("knobs")).expect("fixture") {
        let from = entry.expect("entry").path();
        std::fs::copy(&from, plugin.path().join(from.file_name().expect("name"))).expect("copy");
    }
    let manifest = plugin.path().join("kaged-plugin.yaml");
    let text = std::fs::read_to_string(&manifest).expect("read");
    let with = text.replace(
        "    default: \"config:/memory\"\n",
        "    default: \"config:/memory\"\n    must_exist: true\n",
    );
    assert_ne!(text, with, "the fixture's path knob");
    std::fs::write(&manifest, with).expect("write");
    let (config_root, project_root) = (
        tempfile::tempdir().expect("c"),
        tempfile::tempdir().expect("p"),
    );
    std::fs::create_dir(config_root.path().join("memory")).expect("mkdir");
    std::fs::create_dir(project_root.path().join("notes")).expect("mkdir");
    let audit = AuditLog::memory();
    let host = kaged_host_core::HostSim::new(
        kaged_host_core::HostConfig::default()
            .with_time_scale(kaged_host_core::TimeScale::new(EASY).expect("scale"))
            .with_audit(audit.clone())
            .with_config_root(config_root.path().to_path_buf())
            .with_project_root(project_root.path().to_path_buf()),
    );
    let yaml = "primary:\n  plugins:\n    tuned:\n      package: \"@kaged/knobs\"\n";
    let project = Project::from_yaml_str(yaml, "project.yaml").expect("project");
    let dirs = PluginDirs::Map(BTreeMap::from([(
        "@kaged/knobs".to_string(),
        plugin.path().to_path_buf(),
    )]));
    let mut agents = AgentHost::start(host, &project, &dirs)
        .await
        .expect("start");
    for ok in ["config:/memory", "project:/notes"] {
        agents
            .write_knob("primary", "tuned", "store", json!(ok))
            .await
            .unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    let sent = seen(&agents).await.len();
    for (value, why) in [
        (
            "config:/elsewhere",
            "\"config:/elsewhere\" does not exist (",
        ),
        ("project:/gone", "\"project:/gone\" does not exist ("),
        (
            "config:/../memory",
            "\"config:/../memory\" has a `..` component",
        ),
    ] {
        let err = agents
            .write_knob("primary", "tuned", "store", json!(value))
            .await
            .expect_err(value);
        match &err {
            KnobWriteError::OutOfBounds { knob, reason } => {
                assert_eq!(knob, "store");
                assert!(reason.starts_with(why), "{value}: {reason}");
            }
            other => panic!("{value}: {other:?}"),
        }
    }
    assert_eq!(
        seen(&agents).await.len(),
        sent,
        "nothing reached the plugin"
    );
    stop(agents).await;
}
