//! Project/system config: validation events, the system-only rule,
//! defaults and the merged union.

use crate::support::projects;
use crate::support::projects::{events, inline, ok};
use kaged_host_core::AuditEvent;
use kaged_host_engine::agents::{
    config::{merge_config, validate, ConfigSide},
    Project,
};
use kaged_plugin_protocol::manifest::{apply_defaults, Manifest};
use serde_json::{json, Map, Value};

const RESEARCHER: &str = "primary.subagents.researcher";

fn hindsight() -> Manifest {
    Manifest::load_dir(&projects::dir().join("plugins/memory-hindsight")).unwrap()
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("{other}"),
    }
}

#[test]
fn merged_config_is_the_union_of_both_sides_with_defaults() {
    let res = ok(&inline(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-hindsight\"\n      config: { tags: [a] }\n\
         \x20   notes:\n      package: \"@kaged/memory-markdown\"\n",
    ));
    let primary = res.agent("primary").unwrap();
    let m = primary.plugin("memory").unwrap();
    assert_eq!(
        Value::Object(m.config.clone()),
        json!({"tags": ["a"], "api_url": "https://api.hindsight.vectorize.io",
               "recall_budget": "mid", "api_token": "hs-token"})
    );
    assert_eq!(
        Value::Object(primary.plugin("notes").unwrap().config.clone()),
        json!({"max_notes": 100})
    );
    assert!(res.events_of(AuditEvent::ConfigValidationFailed).is_empty());
}

#[test]
fn invalid_project_config_emits_an_event_and_the_plugin_is_inactive_on_that_agent() {
    let res = ok(&inline(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-hindsight\"\n      config: { recall_budget: huge }\n\
         \x20 subagents:\n    researcher:\n      plugins:\n        memory:\n          package: \"@kaged/memory-hindsight\"\n",
    ));
    let f = events(&res, "primary", AuditEvent::ConfigValidationFailed);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].plugin, "memory-hindsight");
    assert_eq!(f[0].get("name"), "memory-hindsight");
    assert_eq!(f[0].get("side"), "project");
    let errors = f[0].get("errors").as_array().unwrap();
    assert!(
        errors[0].as_str().unwrap().starts_with("/recall_budget: "),
        "{errors:?}"
    );
    assert!(res.agent("primary").unwrap().plugins.is_empty());
    assert!(res.agent("primary").unwrap().tools.is_empty());
    assert_eq!(res.agent(RESEARCHER).unwrap().keys(), ["memory"]);
}

#[test]
fn missing_system_config_fails_on_the_system_side() {
    let project = Project::from_yaml_str(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-hindsight\"\n",
        "p.yaml",
    )
    .unwrap();
    let res = ok(&project);
    let f = events(&res, "primary", AuditEvent::ConfigValidationFailed);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].get("side"), "system");
    assert!(f[0].get("errors")[0]
        .as_str()
        .unwrap()
        .contains("api_token"));
    assert!(res.agent("primary").unwrap().plugins.is_empty());
}

#[test]
fn invalid_system_config_fails_on_the_system_side() {
    let mut system = kaged_host_engine::agents::SystemConfig::new();
    system.insert("@kaged/memory-hindsight", obj(json!({"api_token": 7})));
    let project = Project::from_yaml_str(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-hindsight\"\n",
        "p.yaml",
    )
    .unwrap()
    .with_system_config(system);
    let res = ok(&project);
    let f = events(&res, "primary", AuditEvent::ConfigValidationFailed);
    assert_eq!(f[0].get("side"), "system");
    assert!(f[0].get("errors")[0]
        .as_str()
        .unwrap()
        .starts_with("/api_token: "));
}

#[test]
fn a_system_only_key_in_project_config_is_rejected() {
    let res = ok(&inline(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-hindsight\"\n      config: { api_token: leaked }\n",
    ));
    let f = events(&res, "primary", AuditEvent::ConfigValidationFailed);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].get("side"), "project");
    let first = f[0].get("errors")[0].as_str().unwrap();
    assert!(
        first.contains("system_config_schema") && first.contains("api_token"),
        "{first}"
    );
    assert!(res.agent("primary").unwrap().plugins.is_empty());
}

#[test]
fn merge_config_reports_both_sides_and_merges_on_success() {
    let m = hindsight();
    let bad = merge_config(&m, &obj(json!({"tags": "x"})), None).unwrap_err();
    let sides: Vec<_> = bad.iter().map(|f| f.side).collect();
    assert_eq!(sides, [ConfigSide::Project, ConfigSide::System]);
    assert_eq!(ConfigSide::System.as_str(), "system");
    let system = obj(json!({"api_token": "t"}));
    let good = merge_config(&m, &obj(json!({"recall_budget": "low"})), Some(&system)).unwrap();
    assert_eq!(good.project["recall_budget"], "low");
    assert_eq!(good.merged["api_token"], "t");
    assert_eq!(good.merged.len(), good.project.len() + good.system.len());
}

#[test]
fn defaults_fill_absent_top_level_fields_only() {
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "integer", "default": 1}, "b": {"type": "integer", "default": 2},
        "c": {"type": "integer"}}, "required": ["a"]});
    let mut cfg = obj(json!({"b": 5}));
    apply_defaults(Some(&schema), &mut cfg);
    assert_eq!(Value::Object(cfg.clone()), json!({"b": 5, "a": 1}));
    assert!(validate(Some(&schema), &cfg).is_empty());
    assert_eq!(validate(Some(&schema), &obj(json!({"b": 5}))).len(), 1);
    assert!(validate(None, &obj(json!({"anything": true}))).is_empty());
    let broken = json!({"type": 12});
    assert!(validate(Some(&broken), &Map::new())[0].contains("does not compile"));
}

/// A manifest with a `config_schema` and, when `system` is given, a
/// `system_config_schema` letting any key through.
fn manifest_with(system: Option<Value>) -> Manifest {
    let mut yaml = String::from(
        "name: p\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [x]\ncapabilities: []\n\
         config_schema: {type: object, properties: {shared: {type: string}, own: {type: string}}}\n",
    );
    if let Some(schema) = system {
        yaml.push_str(&format!("system_config_schema: {schema}\n"));
    }
    Manifest::from_yaml_str(&yaml).expect("a manifest")
}

#[test]
fn without_a_system_config_schema_no_system_key_is_accepted() {
    // ADDENDUM §15: "a plugin without one accepts no system-side keys (a
    // config error naming the key)" — a local.toml key never slips in
    // unvalidated.
    let m = manifest_with(None);
    let system = obj(json!({"own": "from local.toml", "token": "t"}));
    let failures = merge_config(&m, &obj(json!({"own": "p"})), Some(&system)).unwrap_err();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].side, ConfigSide::System);
    assert_eq!(failures[0].errors.len(), 2, "{:?}", failures[0].errors);
    assert!(
        failures[0].errors[0].starts_with("/own: `own` is not accepted"),
        "{:?}",
        failures[0].errors
    );
    assert!(
        failures[0].errors[1].contains("`token`"),
        "{:?}",
        failures[0].errors
    );
    // No local block, or an empty one: nothing to refuse.
    assert!(merge_config(&m, &obj(json!({"own": "p"})), None).is_ok());
    assert!(merge_config(&m, &obj(json!({"own": "p"})), Some(&Map::new())).is_ok());
}

#[test]
fn on_a_collision_the_project_value_wins_and_the_key_is_reported() {
    // ADR-0023: the project block takes precedence; ADDENDUM §15: the
    // collision is reported.
    let m = manifest_with(Some(
        json!({"type": "object", "properties": {"token": {"type": "string"}}}),
    ));
    let system = obj(json!({"token": "t", "shared": "from local.toml"}));
    let merged = merge_config(
        &m,
        &obj(json!({"shared": "from the project"})),
        Some(&system),
    )
    .expect("merges");
    assert_eq!(merged.merged["shared"], "from the project");
    assert_eq!(merged.merged["token"], "t");
    assert_eq!(merged.collisions, ["shared"]);
    let clean = merge_config(
        &m,
        &obj(json!({"own": "x"})),
        Some(&obj(json!({"token": "t"}))),
    )
    .expect("merges");
    assert!(clean.collisions.is_empty());
}
