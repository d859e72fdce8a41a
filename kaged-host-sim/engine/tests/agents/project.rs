//! Loading project files and operator-local system config: the model, and
//! errors that name file, line, column and field path.

use crate::support::projects;
use std::collections::BTreeMap;

use kaged_host_engine::agents::{Isolation, Project, ProjectError, SystemConfig};

fn field_error(yaml: &str) -> (String, usize, usize, String) {
    match Project::from_yaml_str(yaml, "bad.yaml") {
        Err(ProjectError::Field { at, path, message }) => {
            assert_eq!(at.file, "bad.yaml");
            (path, at.line, at.column, message)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_cascade_fixture_loads_into_the_model() {
    let p = projects::fixture("cascade.yaml");
    assert!(p.file.ends_with("cascade.yaml"));
    let memory = p.primary.plugin("memory").unwrap();
    assert_eq!(
        memory.package.as_ref().unwrap().value,
        "@kaged/memory-hindsight"
    );
    assert_eq!(memory.isolation.as_ref().unwrap().value, Isolation::Project);
    let hooks: Vec<_> = memory
        .hooks
        .as_ref()
        .unwrap()
        .iter()
        .map(|h| h.value.as_str())
        .collect();
    assert_eq!(
        hooks,
        [
            "on_session_start",
            "on_session_idle",
            "pre_compact",
            "post_compact"
        ]
    );
    assert_eq!((memory.pos.line, memory.pos.column), (5, 5));
    let r = p.agent("primary.subagents.researcher").unwrap();
    let rm = r.plugin("memory").unwrap();
    assert!(rm.package.is_none() && rm.isolation.is_none());
    assert_eq!(
        rm.config.as_ref().unwrap()["tags"],
        serde_json::json!(["researcher"])
    );
    assert!(!r.is_primary() && p.primary.is_primary());
}

#[test]
fn agents_are_listed_depth_first_with_canonical_paths() {
    let p = projects::fixture("deep.yaml");
    let paths: Vec<_> = p.agents().iter().map(|a| a.path.clone()).collect();
    assert_eq!(
        paths,
        [
            "primary",
            "primary.subagents.researcher",
            "primary.subagents.researcher.subagents.scout",
            "primary.subagents.researcher.subagents.scout.subagents.probe",
        ]
    );
    let probe = p.agents()[3];
    assert_eq!(
        probe.compaction_delegate.as_ref().unwrap().value,
        "memory-hindsight"
    );
}

#[test]
fn the_tools_block_keeps_only_disabled_entries() {
    let p = projects::fixture("tools.yaml");
    assert_eq!(
        p.primary.tools_disabled,
        ["memory-markdown.recall", "file.read"]
    );
}

#[test]
fn plugin_declaration_order_is_preserved() {
    let p = projects::fixture("order.yaml");
    let keys: Vec<_> = p.primary.plugins.iter().map(|d| d.key.as_str()).collect();
    assert_eq!(keys, ["zeta", "alpha", "mid"]);
}

#[test]
fn an_unknown_declaration_field_names_its_path_and_position() {
    let (path, line, column, message) = field_error(
        "primary:\n  plugins:\n    memory:\n      package: x\n      hook: [pre_compact]\n",
    );
    assert_eq!(path, "primary.plugins.memory.hook");
    assert_eq!((line, column), (5, 7));
    assert!(message.contains("unknown field"), "{message}");
}

#[test]
fn a_bad_isolation_value_is_located() {
    let (path, line, column, _) = field_error(
        "primary:\n  subagents:\n    r:\n      plugins:\n        m:\n          isolation: global\n",
    );
    assert_eq!(path, "primary.subagents.r.plugins.m.isolation");
    assert_eq!((line, column), (6, 22));
}

#[test]
fn hooks_must_be_a_list_of_strings() {
    let (path, ..) = field_error("primary:\n  plugins:\n    m:\n      hooks: pre_compact\n");
    assert_eq!(path, "primary.plugins.m.hooks");
    let (path, line, column, _) =
        field_error("primary:\n  plugins:\n    m:\n      hooks: [pre_compact, 3]\n");
    assert_eq!(path, "primary.plugins.m.hooks[1]");
    assert_eq!((line, column), (4, 28));
}

#[test]
fn config_must_be_a_mapping() {
    let (path, ..) = field_error("primary:\n  plugins:\n    m:\n      config: [1]\n");
    assert_eq!(path, "primary.plugins.m.config");
}

#[test]
fn duplicate_plugin_keys_are_rejected() {
    let (path, line, ..) =
        field_error("primary:\n  plugins:\n    m:\n      package: a\n    m:\n      package: b\n");
    assert_eq!(path, "primary.plugins.m");
    assert_eq!(line, 5);
}

#[test]
fn tool_opt_outs_need_a_boolean() {
    let (path, ..) =
        field_error("primary:\n  tools:\n    \"memory-markdown.recall\": { enabled: no }\n");
    assert_eq!(path, "primary.tools[\"memory-markdown.recall\"].enabled");
}

#[test]
fn a_delegate_needs_a_plugin() {
    let (path, ..) = field_error("primary:\n  compaction:\n    delegate: { strategy: x }\n");
    assert_eq!(path, "primary.compaction.delegate");
    let (path, ..) = field_error("primary:\n  compaction:\n    delegate: { plugin: 3 }\n");
    assert_eq!(path, "primary.compaction.delegate.plugin");
}

#[test]
fn subagent_names_become_path_segments() {
    let (path, ..) = field_error("primary:\n  subagents:\n    \"a.b\": {}\n");
    assert_eq!(path, "primary.subagents[\"a.b\"]");
}

#[test]
fn primary_is_required_and_syntax_errors_are_located() {
    let (path, ..) = field_error("name: x\n");
    assert_eq!(path, "primary");
    match Project::from_yaml_str("primary: [1, 2\nx: 3\n", "bad.yaml") {
        Err(e @ ProjectError::Syntax { .. }) => {
            assert!(e.at().is_some(), "{e}");
            assert!(e.to_string().starts_with("bad.yaml:"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    let e = Project::load(std::path::Path::new("/nonexistent/project.yaml")).unwrap_err();
    assert!(matches!(e, ProjectError::Io { .. }));
}

#[test]
fn field_errors_display_file_line_column_and_path() {
    let e = Project::from_yaml_str("primary:\n  plugins:\n    m:\n      typo: 1\n", "p.yaml")
        .unwrap_err();
    assert_eq!(e.field_path(), Some("primary.plugins.m.typo"));
    assert!(
        e.to_string()
            .starts_with("p.yaml:4:7: primary.plugins.m.typo: "),
        "{e}"
    );
}

#[test]
fn system_config_substitutes_variables() {
    let sc = projects::system();
    assert_eq!(
        sc.get("@kaged/memory-hindsight").unwrap()["api_token"],
        "hs-token"
    );
    assert_eq!(
        sc.get("@example/smart-compactor").unwrap()["license_key"],
        "lic-42"
    );
    assert!(
        sc.get("memory-hindsight").is_none(),
        "keyed by package name"
    );
    let sc = SystemConfig::from_toml_str(
        "[plugins.p]\ncost = \"$5\"\nn = 3\n",
        "l.toml",
        &BTreeMap::new(),
    )
    .unwrap();
    assert_eq!(sc.get("p").unwrap()["cost"], "$5");
    assert_eq!(sc.get("p").unwrap()["n"], 3);
}

#[test]
fn an_unset_variable_is_a_located_error() {
    let text = "# secrets\n[plugins.\"@kaged/memory-hindsight\"]\napi_token = \"${NOPE}\"\n";
    match SystemConfig::from_toml_str(text, "local.toml", &BTreeMap::new()) {
        Err(ProjectError::Field { at, path, message }) => {
            assert_eq!(
                (at.file.as_str(), at.line, at.column),
                ("local.toml", 3, 13)
            );
            assert_eq!(path, "plugins[\"@kaged/memory-hindsight\"].api_token");
            assert!(message.contains("NOPE"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let e = SystemConfig::from_toml_str("[plugins.p]\nk = [\"${A\"]\n", "l.toml", &BTreeMap::new())
        .unwrap_err();
    assert_eq!(e.field_path(), Some("plugins.p.k[0]"));
    assert!(e.to_string().contains("unterminated"));
}

#[test]
fn local_toml_values_become_json_and_other_tables_are_ignored() {
    let text = r#"
# The daemon's own settings are not plugin config.
log_level = "debug"
[daemon]
port = 7000

[plugins."@kaged/memory-hindsight"]
api_token = "tok"
budget = 0x10
ratio = 0.5
enabled = true
tags = ["a", "b"]
since = 2024-05-01T10:00:00Z
endpoint = { host = "example.org", port = 443 }

[plugins."@kaged/memory-hindsight".limits]
per_day = 1_000
"#;
    let sc = SystemConfig::from_toml_str(text, "local.toml", &BTreeMap::new()).expect("parses");
    assert_eq!(
        serde_json::Value::Object(sc.get("@kaged/memory-hindsight").expect("block").clone()),
        serde_json::json!({
            "api_token": "tok", "budget": 16, "ratio": 0.5, "enabled": true,
            "tags": ["a", "b"], "since": "2024-05-01T10:00:00Z",
            "endpoint": {"host": "example.org", "port": 443},
            "limits": {"per_day": 1000}
        })
    );
    assert!(sc.get("daemon").is_none() && sc.get("log_level").is_none());
}

#[test]
fn local_toml_errors_are_located() {
    let env = BTreeMap::new();
    // A syntax error (YAML is not read any more).
    let e =
        SystemConfig::from_toml_str("plugins:\n  p:\n    k: v\n", "local.toml", &env).unwrap_err();
    assert!(
        matches!(&e, ProjectError::Syntax { file, line: Some(1), column: Some(_), .. } if file == "local.toml"),
        "{e:?}"
    );
    // A plugin block that is not a table.
    match SystemConfig::from_toml_str("[plugins]\np = 3\n", "local.toml", &env) {
        Err(ProjectError::Field { at, path, message }) => {
            assert_eq!((at.line, at.column), (2, 5));
            assert_eq!(path, "plugins.p");
            assert_eq!(message, "expected a table, found integer");
        }
        other => panic!("{other:?}"),
    }
    // JSON holds no NaN.
    let e = SystemConfig::from_toml_str("[plugins.p]\nx = nan\n", "local.toml", &env).unwrap_err();
    assert_eq!(e.field_path(), Some("plugins.p.x"));
    assert!(
        e.to_string().contains("cannot be represented in JSON"),
        "{e}"
    );
}
