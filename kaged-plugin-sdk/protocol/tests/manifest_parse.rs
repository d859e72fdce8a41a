//! Parsing `kaged-plugin.yaml`: the spec's example manifests, located errors.

use std::path::PathBuf;

use kaged_plugin_protocol::manifest::{
    parse_yaml, CapabilityEntry, Manifest, ManifestError, Pos, YamlValue, MANIFEST_FILE,
};
use kaged_plugin_protocol::{HookName, PluginRole};

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/spec")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn parse(name: &str) -> Manifest {
    Manifest::from_yaml_str(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn yaml_error(text: &str) -> (String, Option<usize>, Option<usize>, Option<String>) {
    match Manifest::from_yaml_str(text) {
        Err(ManifestError::Yaml {
            message,
            line,
            column,
            path,
        }) => (message, line, column, path),
        other => panic!("expected a YAML error, got {other:?}"),
    }
}

#[test]
fn full_schema_example_parses() {
    let m = parse("full-schema.yaml");
    assert_eq!(m.name, "memory-markdown");
    assert_eq!(m.version, "0.1.0");
    assert_eq!(m.kaged_api, 1);
    assert_eq!(m.description, "Markdown-file-backed agent memory.");
    assert_eq!(m.command, ["/usr/bin/env", "bun", "./dist/index.js"]);
    assert_eq!(m.env.get("LOG_LEVEL").map(String::as_str), Some("info"));
    assert_eq!(
        m.capability_strings(),
        [
            "read:fs:config:/memory",
            "write:fs:config:/memory",
            "kaged:storage:read",
            "net:[]"
        ]
    );
    assert!(matches!(&m.capabilities[3], CapabilityEntry::Map(map) if map.contains_key("net")));
    assert_eq!(m.hook_names(), HookName::ALL.to_vec());
    assert_eq!(m.effective_roles(), [PluginRole::Observer]);
    assert_eq!(
        m.prefixed_tool_names(),
        ["memory-markdown.retain", "memory-markdown.recall"]
    );
    for name in m.prefixed_tool_names() {
        assert!(m.is_prefixed_tool(&name), "{name}");
    }
    for not_a_tool in [
        "memory-markdown.forget",
        "memory-markdown",
        "memory-markdownretain",
        "retain",
        "other.retain",
        "presets.list",
    ] {
        assert!(!m.is_prefixed_tool(not_a_tool), "{not_a_tool}");
    }
    assert_eq!(m.methods, ["presets.list"]);
    assert_eq!(m.notifications, ["catalog.updated"]);
    let knob_names: Vec<&str> = m.knobs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(knob_names, ["store", "isolation"], "declaration order kept");
    assert_eq!(m.knobs[0].1.kind, "path");
    assert_eq!(m.knobs[0].1.binds_to.as_deref(), Some("config.store"));
    assert!(m.knobs[0].1.fields.contains_key("prefixes"));
    assert_eq!(m.shutdown_timeout_sec(), 5);
    assert_eq!(m.health_interval_sec(), 30);
    assert_eq!(m.hook_timeout_sec(), 10);
}

#[test]
fn oh_my_pi_example_parses() {
    let m = parse("oh-my-pi.yaml");
    assert_eq!(m.name, "oh-my-pi");
    assert_eq!(m.version, "1.4.2");
    assert_eq!(m.methods.len(), 4);
    assert_eq!(
        m.capability_strings(),
        ["read:fs:/opt/oh-my-pi", "exec:bash:/opt/oh-my-pi", "net:[]"]
    );
    assert!(m.effective_roles().is_empty(), "no hooks, no roles");
    assert_eq!(m.storage_prefix(), "plugin_oh_my_pi_");
}

#[test]
fn shell_adapter_example_parses() {
    let m = parse("my-simple-adapter.yaml");
    assert_eq!(m.name, "my-simple-adapter");
    assert!(m.capabilities.is_empty());
    assert_eq!(m.declared_methods(), ["status.get"]);
    assert!(m.notifications.is_empty());
}

#[test]
fn config_and_knob_snippets_parse() {
    let m = parse("memory-hindsight.yaml");
    assert_eq!(
        m.effective_roles(),
        [PluginRole::Observer, PluginRole::Compactor]
    );
    let knob_names: Vec<&str> = m.knobs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        knob_names,
        [
            "recall_budget",
            "retain_every_n_turns",
            "store",
            "thinking_model"
        ]
    );
    let thinking = &m.knobs[3].1;
    assert_eq!(
        thinking.fields.get("default"),
        Some(&serde_json::Value::Null)
    );
    let sys = m.system_config_schema.as_ref().expect("system schema");
    assert_eq!(sys["required"][0], "api_token");
}

#[test]
fn defaults_apply_when_fields_are_absent() {
    let m = Manifest::from_yaml_str(
        "name: p\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [x]\ncapabilities: []\nhooks: [pre_compact]\n",
    )
    .expect("parses");
    assert!(m.methods.is_empty(), "methods default to [] (ADDENDUM §3)");
    assert_eq!(m.roles, None);
    assert_eq!(m.effective_roles(), [PluginRole::Observer]);
    assert_eq!(m.shutdown_timeout_sec(), 5);
}

#[test]
fn syntax_error_reports_line_and_column() {
    let (message, line, column, path) =
        yaml_error("name: x\nversion: 1.0.0\ncommand: [a, b\ncapabilities: []\n");
    assert!(!message.is_empty());
    assert!(line.is_some_and(|l| l >= 3), "line {line:?}");
    assert!(column.is_some());
    assert_eq!(path, None);
}

#[test]
fn wrong_type_reports_the_field_path_and_its_location() {
    let text = "name: x\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [x]\ncapabilities: []\ntools:\n  - name: a\n    parameters_schema: {type: object}\n  - name: [not, a, string]\n    parameters_schema: {type: object}\n";
    let (message, line, column, path) = yaml_error(text);
    assert_eq!(path.as_deref(), Some("tools[1].name"));
    assert_eq!(line, Some(10));
    assert_eq!(column, Some(11));
    assert!(message.contains("string"), "{message}");
}

#[test]
fn missing_required_field_points_at_its_parent() {
    let (message, line, _, path) = yaml_error("name: x\nversion: 1.0.0\n");
    assert!(message.contains("kaged_api"), "{message}");
    assert_eq!(line, Some(1));
    assert_eq!(path.as_deref(), Some(""));
}

#[test]
fn unknown_top_level_key_is_named() {
    let text = "name: x\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [x]\ncapabilities: []\nbogus: 1\n";
    let (message, _, _, _) = yaml_error(text);
    assert!(message.contains("bogus"), "{message}");
}

#[test]
fn error_display_names_location_and_path() {
    let e = Manifest::from_yaml_str("name: [x]\n").expect_err("invalid");
    let shown = e.to_string();
    assert!(shown.starts_with("line 1, column 7: name: "), "{shown}");
    assert_eq!(e.pos(), Some(Pos { line: 1, column: 7 }));
}

#[test]
fn located_tree_uses_yaml_1_2_core_scalars() {
    let root = parse_yaml("a: yes\nb: 0.1.0\nc: ~\nd: 3\ne: 1.5\n").expect("parses");
    assert_eq!(root.get("a").and_then(|n| n.as_str()), Some("yes"));
    assert_eq!(root.get("b").and_then(|n| n.as_str()), Some("0.1.0"));
    assert!(root.get("c").is_some_and(|n| n.is_null()));
    assert_eq!(root.get("d").and_then(|n| n.as_i64()), Some(3));
    assert_eq!(
        root.get("e").map(|n| &n.value),
        Some(&YamlValue::Float(1.5))
    );
    assert_eq!(
        root.get("e").map(|n| n.pos),
        Some(Pos { line: 5, column: 4 })
    );
}

#[test]
fn load_dir_reads_the_manifest_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join(MANIFEST_FILE), fixture("oh-my-pi.yaml")).expect("write");
    assert_eq!(
        Manifest::load_dir(dir.path()).expect("loads").name,
        "oh-my-pi"
    );
    let missing = tempfile::tempdir().expect("tempdir");
    assert!(matches!(
        Manifest::load_dir(missing.path()),
        Err(ManifestError::Io { .. })
    ));
}

#[test]
fn round_trips_through_json() {
    let m = parse("full-schema.yaml");
    let json = serde_json::to_value(&m).expect("serializes");
    let back: Manifest = serde_json::from_value(json).expect("deserializes");
    assert_eq!(back, m);
}
