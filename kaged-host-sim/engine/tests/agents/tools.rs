//! The per-agent tool registry: registration events, collisions, the
//! built-in namespace warning, the naming rule and `tools:` opt-outs.

use crate::support::projects;
use crate::support::projects::{catalogue, events, fixture, inline, ok};
use kaged_host_core::AuditEvent;
use kaged_host_engine::agents::{
    resolve,
    tools::{is_builtin_namespace, ToolRegistry, ToolRejection},
    ResolveWarning,
};
use kaged_plugin_protocol::manifest::Manifest;

const RESEARCHER: &str = "primary.subagents.researcher";

fn markdown() -> Manifest {
    Manifest::load_dir(&projects::dir().join("plugins/memory-markdown")).unwrap()
}

#[test]
fn every_registered_tool_emits_tool_registered_with_its_agent() {
    let res = ok(&fixture("no-inheritance.yaml"));
    assert_eq!(
        res.agent("primary").unwrap().tools,
        ["memory-markdown.retain", "memory-markdown.recall"]
    );
    let reg = events(&res, "primary", AuditEvent::ToolRegistered);
    let data: Vec<_> = reg
        .iter()
        .map(|e| {
            (
                e.get("name").clone(),
                e.get("tool").clone(),
                e.get("agent_path").clone(),
            )
        })
        .collect();
    assert_eq!(
        data,
        [
            (
                "memory-markdown".into(),
                "memory-markdown.retain".into(),
                "primary".into()
            ),
            (
                "memory-markdown".into(),
                "memory-markdown.recall".into(),
                "primary".into()
            ),
        ]
    );
    assert!(events(&res, RESEARCHER, AuditEvent::ToolRegistered).is_empty());
}

#[test]
fn the_tools_block_opts_a_tool_out_on_that_agent_only() {
    let res = ok(&fixture("tools.yaml"));
    let primary = res.agent("primary").unwrap();
    assert_eq!(primary.tools, ["memory-markdown.retain", "shell.run"]);
    assert_eq!(
        primary.plugin("memory").unwrap().tools,
        ["memory-markdown.retain"]
    );
    let registered: Vec<_> = events(&res, "primary", AuditEvent::ToolRegistered)
        .iter()
        .map(|e| e.get("tool").clone())
        .collect();
    assert!(!registered.contains(&"memory-markdown.recall".into()));
    // The plugin itself stays active, with its hooks.
    assert_eq!(primary.keys(), ["memory", "sh"]);
    assert_eq!(
        res.agent(RESEARCHER).unwrap().tools,
        ["memory-markdown.retain", "memory-markdown.recall"]
    );
}

#[test]
fn a_plugin_named_like_a_builtin_namespace_warns_but_loads() {
    let res = ok(&fixture("tools.yaml"));
    assert_eq!(
        res.agent("primary").unwrap().warnings,
        [ResolveWarning::BuiltinNamespace {
            agent_path: "primary".into(),
            plugin: "shell".into()
        }]
    );
    assert!(res.agent(RESEARCHER).unwrap().warnings.is_empty());
    assert!(is_builtin_namespace("kaged") && is_builtin_namespace("file"));
    assert!(!is_builtin_namespace("memory-markdown") && !is_builtin_namespace("files"));
}

#[test]
fn a_second_plugin_registering_the_same_tool_fails_and_the_first_stays() {
    let mut cat = catalogue();
    let mut fork = markdown();
    fork.version = "9.9.9".into();
    cat.insert("@acme/memory-markdown", fork);
    let project = inline(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-markdown\"\n\
         \x20   fork:\n      package: \"@acme/memory-markdown\"\n\
         \x20   audit:\n      package: \"@kaged/audit-sink\"\n\
         \x20 subagents:\n    researcher:\n      plugins:\n        fork:\n          package: \"@acme/memory-markdown\"\n",
    );
    let res = resolve(&project, &cat).unwrap();
    let primary = res.agent("primary").unwrap();
    assert_eq!(primary.keys(), ["memory", "audit"]);
    assert_eq!(
        primary.tools,
        ["memory-markdown.retain", "memory-markdown.recall"]
    );
    let c = events(&res, "primary", AuditEvent::ToolNameCollision);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].get("first"), "memory-markdown");
    assert_eq!(c[0].get("second"), "memory-markdown");
    assert_eq!(c[0].get("tool"), "memory-markdown.retain");
    assert_eq!(c[0].get("first_key"), "memory");
    assert_eq!(c[0].get("second_key"), "fork");
    assert_eq!(events(&res, "primary", AuditEvent::ToolRegistered).len(), 2);
    // Per agent: alone on the researcher, the fork loads.
    let r = res.agent(RESEARCHER).unwrap();
    assert_eq!(r.keys(), ["fork"]);
    assert_eq!(r.plugin("fork").unwrap().package, "@acme/memory-markdown");
    assert!(events(&res, RESEARCHER, AuditEvent::ToolNameCollision).is_empty());
}

#[test]
fn the_same_plugin_on_two_agents_is_not_a_collision() {
    let res = ok(&fixture("tools.yaml"));
    assert!(res.events_of(AuditEvent::ToolNameCollision).is_empty());
}

#[test]
fn a_tool_name_outside_the_registered_pattern_fails_the_plugin() {
    let res = ok(&inline(
        "primary:\n  plugins:\n    x:\n      package: \"@kaged/x\"\n    audit:\n      package: \"@kaged/audit-sink\"\n",
    ));
    let primary = res.agent("primary").unwrap();
    assert_eq!(primary.keys(), ["audit"]);
    assert!(primary.tools.is_empty());
    let failed = events(&res, "primary", AuditEvent::Failed);
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].get("reason"), "tool_name_invalid");
    assert_eq!(failed[0].get("tool"), "x.go");
}

#[test]
fn the_registry_checks_names_and_collisions_all_or_nothing() {
    let mut reg = ToolRegistry::new();
    let names = reg.check(&markdown()).unwrap();
    reg.add("memory-markdown", "memory", &names);
    assert_eq!(
        reg.tools(),
        ["memory-markdown.retain", "memory-markdown.recall"]
    );
    assert_eq!(reg.owner("memory-markdown.recall"), Some("memory-markdown"));
    assert_eq!(
        reg.check(&markdown()),
        Err(ToolRejection::Collision {
            tool: "memory-markdown.retain".into(),
            first: "memory-markdown".into(),
            first_key: "memory".into()
        })
    );
    let mut dup = markdown();
    dup.name = "other".into();
    dup.tools[1].name = "retain".into();
    assert_eq!(
        reg.check(&dup),
        Err(ToolRejection::Duplicate {
            tool: "other.retain".into()
        })
    );
    let mut bad = markdown();
    bad.name = "Bad".into();
    assert!(matches!(
        reg.check(&bad),
        Err(ToolRejection::InvalidName { .. })
    ));
}

#[test]
fn fixture_manifests_pass_the_validator_except_the_one_letter_plugin() {
    use kaged_host_core::validate::Rule;
    use kaged_host_core::validate_dir;
    let plugins = projects::dir().join("plugins");
    for name in [
        "memory-hindsight",
        "memory-markdown",
        "smart-compactor",
        "audit-sink",
        "shell",
    ] {
        let report = validate_dir(&plugins.join(name));
        assert!(!report.has_errors(), "{name}: {}", report.render_human());
    }
    let shell = validate_dir(&plugins.join("shell"));
    assert_eq!(shell.problems_of(Rule::NameBuiltinNamespace).count(), 1);
    let x = validate_dir(&plugins.join("x"));
    assert_eq!(x.problems_of(Rule::ToolRegisteredName).count(), 1);
}
