//! Per-agent resolution: no inheritance, the isolation: project cascade,
//! hooks (membership, primary-only exclusion, order) and deep agent paths.

use crate::support::projects;
use crate::support::projects::{err, events, fixture, inline, ok};
use kaged_host_core::{AuditEvent, AuditLog};
use kaged_host_engine::agents::{Isolation, ResolveError};
use kaged_plugin_protocol::HookName;
use serde_json::json;

use HookName::{OnSessionIdle, OnSessionStart, PostCompact, PreCompact};

const RESEARCHER: &str = "primary.subagents.researcher";

fn keys(plugins: Vec<&kaged_host_engine::agents::ActivePlugin>) -> Vec<&str> {
    plugins.into_iter().map(|p| p.key.as_str()).collect()
}

// ---- no inheritance -------------------------------------------------------

#[test]
fn a_primary_plugin_is_not_active_on_a_subagent_that_does_not_declare_it() {
    let res = ok(&fixture("no-inheritance.yaml"));
    assert_eq!(
        res.agent_paths(),
        ["primary", RESEARCHER, "primary.subagents.writer"]
    );
    assert_eq!(res.agent("primary").unwrap().keys(), ["memory", "audit"]);
    let researcher = res.agent(RESEARCHER).unwrap();
    assert!(researcher.plugins.is_empty());
    assert!(researcher.tools.is_empty());
    for hook in HookName::ALL {
        assert!(res.hooks_to_fire(RESEARCHER, hook).is_empty(), "{hook}");
    }
    let writer = res.agent("primary.subagents.writer").unwrap();
    assert_eq!(writer.keys(), ["audit"]);
    assert_eq!(writer.plugin("audit").unwrap().hooks, [PostCompact]);
    assert!(res
        .hooks_to_fire("primary.subagents.writer", PreCompact)
        .is_empty());
    assert_eq!(keys(res.hooks_to_fire("primary", PreCompact)), ["memory"]);
}

#[test]
fn under_isolation_agent_a_subagent_block_without_package_is_an_error() {
    let e = err(&inline(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-markdown\"\n\
         \x20 subagents:\n    researcher:\n      plugins:\n        memory:\n          hooks: [pre_compact]\n",
    ));
    assert_eq!(e.errors.len(), 1, "{e}");
    match &e.errors[0] {
        ResolveError::MissingPackage {
            agent_path,
            key,
            at,
            reason,
        } => {
            assert_eq!(agent_path, RESEARCHER);
            assert_eq!(key, "memory");
            assert_eq!((at.line, at.column), (8, 9));
            assert!(reason.contains("self-contained"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let text = e.to_string();
    assert!(
        text.contains(RESEARCHER) && text.contains("`memory`"),
        "{text}"
    );
}

#[test]
fn a_subagent_declaration_with_no_primary_counterpart_needs_a_package() {
    let e = err(&inline(
        "primary:\n  subagents:\n    researcher:\n      plugins:\n        memory:\n          hooks: [pre_compact]\n",
    ));
    assert!(
        matches!(&e.errors[..], [ResolveError::MissingPackage { agent_path, .. }] if agent_path == RESEARCHER)
    );
}

// ---- the isolation: project cascade ----------------------------------------

#[test]
fn the_spec_cascade_example_resolves_as_documented() {
    let res = ok(&fixture("cascade.yaml"));
    let primary = res.agent("primary").unwrap().plugin("memory").unwrap();
    assert_eq!(primary.isolation, Isolation::Project);
    assert_eq!(primary.hooks, HookName::ALL);
    assert_eq!(primary.project_config["tags"], json!(["primary"]));

    let r = res.agent(RESEARCHER).unwrap().plugin("memory").unwrap();
    assert_eq!(r.package, "@kaged/memory-hindsight");
    assert_eq!(r.name, "memory-hindsight");
    assert_eq!(r.isolation, Isolation::Project);
    assert_eq!(r.declared_hooks, [OnSessionIdle]);
    assert!(
        r.hooks.is_empty(),
        "on_session_idle never fires on a subagent"
    );
    assert_eq!(r.config["tags"], json!(["researcher"]));
    assert_eq!(r.config["recall_budget"], "mid");
    assert_eq!(r.config["api_url"], "https://api.hindsight.vectorize.io");
    assert_eq!(r.config["api_token"], "hs-token");
    assert_eq!(r.system_config["api_token"], "hs-token");
    assert!(!r.project_config.contains_key("api_token"));
    let illegal = events(&res, RESEARCHER, AuditEvent::HookIllegal);
    assert_eq!(illegal.len(), 1);
    assert_eq!(illegal[0].plugin, "memory-hindsight");
    assert_eq!(illegal[0].get("name"), "memory-hindsight");
    assert_eq!(illegal[0].get("hook"), "on_session_idle");
    assert_eq!(illegal[0].get("agent_path"), RESEARCHER);
    assert!(res.hooks_to_fire(RESEARCHER, OnSessionIdle).is_empty());
    assert_eq!(
        keys(res.hooks_to_fire("primary", OnSessionIdle)),
        ["memory"]
    );
}

#[test]
fn cascaded_config_fields_are_inherited_not_defaulted() {
    let yaml = std::fs::read_to_string(projects::dir().join("cascade.yaml"))
        .unwrap()
        .replace("recall_budget: mid", "recall_budget: high");
    let res = ok(&inline(&yaml));
    let r = res.agent(RESEARCHER).unwrap().plugin("memory").unwrap();
    assert_eq!(r.config["recall_budget"], "high");
    assert_eq!(r.config["tags"], json!(["researcher"]));
}

#[test]
fn a_cascading_block_without_hooks_inherits_the_primary_hooks() {
    let res = ok(&inline(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-hindsight\"\n      isolation: project\n\
         \x20     hooks: [on_session_start, pre_compact]\n\
         \x20 subagents:\n    researcher:\n      plugins:\n        memory:\n          config: { tags: [r] }\n",
    ));
    let r = res.agent(RESEARCHER).unwrap().plugin("memory").unwrap();
    assert_eq!(r.declared_hooks, [OnSessionStart, PreCompact]);
    assert_eq!(r.hooks, [PreCompact]);
    assert_eq!(events(&res, RESEARCHER, AuditEvent::HookIllegal).len(), 1);
}

const CASCADE_BASE: &str = "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-hindsight\"\n      isolation: project\n\
\x20 subagents:\n    researcher:\n      plugins:\n        memory:\n";

#[test]
fn overriding_package_on_a_subagent_is_an_error_naming_agent_and_field() {
    let e = err(&inline(&format!(
        "{CASCADE_BASE}          package: \"@kaged/memory-markdown\"\n"
    )));
    match &e.errors[..] {
        [ResolveError::CascadeOverride {
            agent_path,
            key,
            field,
            base,
            found,
            at,
        }] => {
            assert_eq!(agent_path, RESEARCHER);
            assert_eq!(key, "memory");
            assert_eq!(*field, "package");
            assert_eq!(base, "@kaged/memory-hindsight");
            assert_eq!(found, "@kaged/memory-markdown");
            assert_eq!((at.file.as_str(), at.line), ("inline.yaml", 10));
        }
        other => panic!("{other:?}"),
    }
    let text = e.to_string();
    assert!(
        text.contains(RESEARCHER) && text.contains("`package`"),
        "{text}"
    );
}

#[test]
fn overriding_isolation_on_a_subagent_is_an_error_naming_agent_and_field() {
    let e = err(&inline(&format!(
        "{CASCADE_BASE}          isolation: agent\n"
    )));
    assert!(
        matches!(&e.errors[..], [ResolveError::CascadeOverride { agent_path, field: "isolation", .. }] if agent_path == RESEARCHER),
        "{e}"
    );
    assert!(e.to_string().contains("`isolation`"));
}

#[test]
fn restating_the_base_package_and_isolation_is_not_an_override() {
    let res = ok(&inline(&format!(
        "{CASCADE_BASE}          package: \"@kaged/memory-hindsight\"\n          isolation: project\n          hooks: [pre_compact]\n"
    )));
    let r = res.agent(RESEARCHER).unwrap().plugin("memory").unwrap();
    assert_eq!(r.hooks, [PreCompact]);
}

#[test]
fn the_primary_base_declaration_must_include_package() {
    let e = err(&inline(
        "primary:\n  plugins:\n    memory:\n      isolation: project\n",
    ));
    assert!(
        matches!(&e.errors[..], [ResolveError::MissingPackage { agent_path, .. }] if agent_path == "primary")
    );
}

// ---- deep agent paths ------------------------------------------------------

#[test]
fn deep_subagents_get_canonical_paths_and_cascade_from_the_primary() {
    let res = ok(&fixture("deep.yaml"));
    let probe = "primary.subagents.researcher.subagents.scout.subagents.probe";
    let scout = "primary.subagents.researcher.subagents.scout";
    assert_eq!(res.agent_paths(), ["primary", RESEARCHER, scout, probe]);
    assert!(res.agent(RESEARCHER).unwrap().plugins.is_empty());
    assert_eq!(res.agent(scout).unwrap().keys(), ["notes"]);
    let m = res.agent(probe).unwrap().plugin("memory").unwrap();
    assert_eq!(m.config["recall_budget"], "high");
    assert_eq!(m.config["tags"], json!(["probe"]));
    assert_eq!(m.hooks, [PreCompact, PostCompact]);
    assert_eq!(
        res.agent(probe).unwrap().compactor.as_deref(),
        Some("memory")
    );
    let illegal = events(&res, probe, AuditEvent::HookIllegal);
    assert_eq!(illegal[0].get("agent_path"), probe);
    assert_eq!(keys(res.hooks_to_fire(probe, PreCompact)), ["memory"]);
    assert!(res.hooks_to_fire(probe, OnSessionStart).is_empty());
    assert_eq!(keys(res.hooks_to_fire(scout, PreCompact)), ["notes"]);
}

#[test]
fn errors_in_deep_subagents_name_the_full_path() {
    let e = err(&inline(
        "primary:\n  subagents:\n    a:\n      subagents:\n        b:\n          plugins:\n            m:\n              package: \"@nope/missing\"\n",
    ));
    match &e.errors[..] {
        [ResolveError::UnknownPackage {
            agent_path,
            package,
            ..
        }] => {
            assert_eq!(agent_path, "primary.subagents.a.subagents.b");
            assert_eq!(package, "@nope/missing");
        }
        other => panic!("{other:?}"),
    }
}

// ---- hooks -----------------------------------------------------------------

#[test]
fn declaration_order_is_hook_firing_order() {
    let res = ok(&fixture("order.yaml"));
    assert_eq!(
        res.agent("primary").unwrap().keys(),
        ["zeta", "alpha", "mid"]
    );
    assert_eq!(
        keys(res.hooks_to_fire("primary", OnSessionStart)),
        ["zeta", "alpha", "mid"]
    );
    assert_eq!(
        keys(res.hooks_to_fire("primary", PreCompact)),
        ["alpha", "mid"]
    );
    assert_eq!(
        keys(res.hooks_to_fire("primary", PostCompact)),
        ["zeta", "alpha", "mid"]
    );
    assert!(res.hooks_to_fire("primary", OnSessionIdle).is_empty());
    let mid = res.agent("primary").unwrap().plugin("mid").unwrap();
    assert_eq!(mid.hooks, [PreCompact, PostCompact, OnSessionStart]);
}

#[test]
fn reordering_declarations_reorders_firing() {
    let yaml = "primary:\n  plugins:\n    alpha:\n      package: \"@kaged/memory-markdown\"\n      hooks: [on_session_start]\n\
                \x20   zeta:\n      package: \"@kaged/audit-sink\"\n      hooks: [on_session_start]\n";
    let res = ok(&inline(yaml));
    assert_eq!(
        keys(res.hooks_to_fire("primary", OnSessionStart)),
        ["alpha", "zeta"]
    );
}

#[test]
fn primary_only_hooks_declared_on_a_subagent_warn_and_never_fire() {
    let res = ok(&inline(
        "primary:\n  plugins:\n    audit:\n      package: \"@kaged/audit-sink\"\n      hooks: [on_session_start, post_compact]\n\
         \x20 subagents:\n    researcher:\n      plugins:\n        audit:\n          package: \"@kaged/audit-sink\"\n\
         \x20         hooks: [on_session_start, on_session_idle, post_compact]\n",
    ));
    assert!(events(&res, "primary", AuditEvent::HookIllegal).is_empty());
    assert_eq!(
        keys(res.hooks_to_fire("primary", OnSessionStart)),
        ["audit"]
    );
    let illegal = events(&res, RESEARCHER, AuditEvent::HookIllegal);
    let hooks: Vec<_> = illegal.iter().map(|e| e.get("hook").clone()).collect();
    assert_eq!(hooks, [json!("on_session_start"), json!("on_session_idle")]);
    assert!(illegal
        .iter()
        .all(|e| e.get("name") == "audit-sink" && e.get("agent_path") == RESEARCHER));
    let a = res.agent(RESEARCHER).unwrap().plugin("audit").unwrap();
    assert_eq!(
        a.declared_hooks,
        [OnSessionStart, OnSessionIdle, PostCompact]
    );
    assert_eq!(a.hooks, [PostCompact]);
    assert!(res.hooks_to_fire(RESEARCHER, OnSessionStart).is_empty());
    assert!(res.hooks_to_fire(RESEARCHER, OnSessionIdle).is_empty());
    assert_eq!(keys(res.hooks_to_fire(RESEARCHER, PostCompact)), ["audit"]);
}

#[test]
fn omitted_hooks_default_to_the_manifest_hooks_without_warning() {
    let res = ok(&fixture("no-inheritance.yaml"));
    let audit = res.agent("primary").unwrap().plugin("audit").unwrap();
    assert_eq!(audit.hooks, [OnSessionStart, OnSessionIdle, PostCompact]);
    let sub = ok(&inline(
        "primary:\n  subagents:\n    researcher:\n      plugins:\n        audit:\n          package: \"@kaged/audit-sink\"\n",
    ));
    let a = sub.agent(RESEARCHER).unwrap().plugin("audit").unwrap();
    assert_eq!(a.hooks, [PostCompact]);
    assert!(events(&sub, RESEARCHER, AuditEvent::HookIllegal).is_empty());
}

#[test]
fn subscribing_to_a_hook_the_manifest_does_not_declare_is_an_error() {
    let e = err(&inline(
        "primary:\n  plugins:\n    audit:\n      package: \"@kaged/audit-sink\"\n      hooks: [post_compact, pre_compact]\n",
    ));
    match &e.errors[..] {
        [ResolveError::UndeclaredHook {
            agent_path,
            key,
            plugin,
            hook,
            at,
        }] => {
            assert_eq!((agent_path.as_str(), key.as_str()), ("primary", "audit"));
            assert_eq!(
                (plugin.as_str(), hook.as_str()),
                ("audit-sink", "pre_compact")
            );
            assert_eq!((at.line, at.column), (5, 29));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unknown_hook_name_is_an_error() {
    let e = err(&inline(
        "primary:\n  plugins:\n    audit:\n      package: \"@kaged/audit-sink\"\n      hooks: [before_tool_call]\n",
    ));
    assert!(
        matches!(&e.errors[..], [ResolveError::UnknownHook { hook, .. }] if hook == "before_tool_call")
    );
}

#[test]
fn every_configuration_error_is_reported_at_once() {
    let e = err(&inline(
        "primary:\n  plugins:\n    a:\n      package: \"@nope/a\"\n    b:\n      hooks: [pre_compact]\n\
         \x20 subagents:\n    s:\n      plugins:\n        c:\n          package: \"@nope/c\"\n",
    ));
    let paths: Vec<_> = e
        .errors
        .iter()
        .map(|e| e.agent_path().to_string())
        .collect();
    assert_eq!(paths, ["primary", "primary", "primary.subagents.s"]);
}

#[test]
fn events_can_be_emitted_into_the_audit_log_in_order() {
    let res = ok(&fixture("cascade.yaml"));
    let log = AuditLog::memory();
    res.emit_into(&log);
    let names = log.names();
    assert_eq!(names.len(), res.events().len());
    assert_eq!(&names[..3], ["plugin.tool_registered"; 3]);
    assert!(names.contains(&"plugin.hook.illegal"));
    let illegal = log.of(AuditEvent::HookIllegal);
    assert_eq!(illegal[0].plugin, "memory-hindsight");
    assert_eq!(illegal[0].get("agent_path"), RESEARCHER);
}

#[test]
fn a_failed_resolution_keeps_the_events_produced_so_far() {
    let e = err(&inline(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-markdown\"\n\
         \x20 subagents:\n    s:\n      plugins:\n        c:\n          package: \"@nope/c\"\n",
    ));
    assert_eq!(e.errors.len(), 1);
    let tools: Vec<_> = e
        .events
        .iter()
        .filter(|ev| ev.event == AuditEvent::ToolRegistered)
        .map(|ev| ev.get("tool").clone())
        .collect();
    assert_eq!(
        tools,
        [
            json!("memory-markdown.retain"),
            json!("memory-markdown.recall")
        ]
    );
}

#[test]
fn packages_map_to_plugins_by_exact_key_then_by_name() {
    use kaged_host_engine::agents::catalogue::package_short_name;
    let mut cat = projects::catalogue();
    assert_eq!(cat.get("@kaged/audit-sink").unwrap().name, "audit-sink");
    assert_eq!(cat.get("audit-sink").unwrap().name, "audit-sink");
    assert_eq!(cat.get("@any/scope/audit-sink").unwrap().name, "audit-sink");
    assert!(cat.get("@kaged/audit").is_none());
    let mut other = cat.get("memory-markdown").unwrap().clone();
    other.version = "7.0.0".into();
    cat.insert("@kaged/audit-sink", other);
    assert_eq!(
        cat.get("@kaged/audit-sink").unwrap().name,
        "memory-markdown"
    );
    assert_eq!(cat.get("@acme/audit-sink").unwrap().name, "audit-sink");
    assert_eq!(
        package_short_name("@kaged/memory-markdown"),
        "memory-markdown"
    );
    assert_eq!(package_short_name("plain"), "plain");
}

// ---- version requirements and sources ------------------------------------

#[test]
fn a_version_requirement_the_installed_plugin_meets_resolves() {
    // memory-hindsight is installed at 1.0.0.
    for required in ["1.0.0", "^1", ">=0.9, <2", "=1.0.0"] {
        let yaml = format!(
            "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-hindsight\"\n      version: \"{required}\"\n"
        );
        let res = ok(&inline(&yaml));
        assert!(
            res.agent("primary").unwrap().plugin("memory").is_some(),
            "{required}"
        );
    }
}

#[test]
fn a_version_requirement_the_installed_plugin_misses_is_an_error_naming_both() {
    // plugin-host.md, Manifest: "The daemon uses this for version
    // constraint checks when projects declare version: requirements."
    let e = err(&inline(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-hindsight\"\n      version: \"^2.1\"\n",
    ));
    match &e.errors[..] {
        [ResolveError::VersionMismatch {
            agent_path,
            key,
            required,
            installed,
            ..
        }] => {
            assert_eq!((agent_path.as_str(), key.as_str()), ("primary", "memory"));
            assert_eq!((required.as_str(), installed.as_str()), ("^2.1", "1.0.0"));
        }
        other => panic!("{other:?}"),
    }
    let text = e.to_string();
    assert!(
        text.contains("inline.yaml:5:") && text.contains("requires version `^2.1`"),
        "{text}"
    );
}

#[test]
fn a_subagent_cannot_loosen_the_primarys_version_requirement() {
    let e = err(&inline(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-hindsight\"\n      isolation: project\n      version: \"^1\"\n  subagents:\n    r:\n      plugins:\n        memory:\n          version: \"*\"\n",
    ));
    assert!(
        matches!(
            &e.errors[..],
            [ResolveError::CascadeOverride {
                field: "version",
                ..
            }]
        ),
        "{:?}",
        e.errors
    );
}

#[test]
fn a_version_that_is_not_a_requirement_is_refused_at_load() {
    let e = kaged_host_engine::agents::Project::from_yaml_str(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-hindsight\"\n      version: \"one\"\n",
        "p.yaml",
    )
    .expect_err("not semver");
    let text = e.to_string();
    assert!(
        text.contains("primary.plugins.memory.version")
            && text.contains("not a semver requirement"),
        "{text}"
    );
}

#[test]
fn a_missing_plugin_names_its_source_resolved_against_the_project_file() {
    let project = kaged_host_engine::agents::Project::from_yaml_str(
        "primary:\n  plugins:\n    m:\n      package: \"@nope/missing\"\n      source: ./vendor/missing\n    n:\n      package: \"@nope/other\"\n",
        "/srv/proj/project.yaml",
    )
    .expect("parses");
    let e = err(&project);
    let sources: Vec<Option<&str>> = e
        .errors
        .iter()
        .map(|x| match x {
            ResolveError::UnknownPackage {
                declared_source, ..
            } => declared_source.as_deref(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(sources, [Some("/srv/proj/vendor/missing"), None]);
    let text = e.to_string();
    assert!(
        text.contains("source: `/srv/proj/vendor/missing`"),
        "{text}"
    );
    assert!(text.contains("names no source"), "{text}");
}
