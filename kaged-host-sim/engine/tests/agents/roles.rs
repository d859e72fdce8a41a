//! The compactor role: at most one per agent, designation through
//! `compaction.delegate.plugin`.

use crate::support::projects::{err, events, fixture, inline, ok};
use kaged_host_core::AuditEvent;
use kaged_host_engine::agents::{ResolveError, ResolveWarning};
use kaged_plugin_protocol::{HookName, PluginRole};

const RESEARCHER: &str = "primary.subagents.researcher";

#[test]
fn two_compactors_on_one_agent_refuse_the_second() {
    let res = ok(&fixture("compactors.yaml"));
    let primary = res.agent("primary").unwrap();
    let v = events(&res, "primary", AuditEvent::RoleViolation);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].plugin, "smart-compactor");
    assert_eq!(v[0].get("first"), "memory-hindsight");
    assert_eq!(v[0].get("second"), "smart-compactor");
    assert_eq!(v[0].get("agent_path"), "primary");
    assert_eq!(primary.keys(), ["memory", "audit"], "squeeze is refused");
    assert_eq!(primary.compactor.as_deref(), Some("memory"));
    let memory = primary.compactor_plugin().unwrap();
    assert_eq!(memory.roles, [PluginRole::Observer, PluginRole::Compactor]);
    assert_eq!(memory.compact_role(), PluginRole::Compactor);
    let pre: Vec<_> = res
        .hooks_to_fire("primary", HookName::PreCompact)
        .iter()
        .map(|p| (p.key.as_str(), p.compact_role()))
        .collect();
    assert_eq!(pre, [("memory", PluginRole::Compactor)]);
}

#[test]
fn a_single_compactor_per_agent_is_accepted_without_violation() {
    let res = ok(&fixture("order.yaml"));
    assert!(res.events_of(AuditEvent::RoleViolation).is_empty());
    let primary = res.agent("primary").unwrap();
    assert_eq!(primary.compactor.as_deref(), Some("mid"));
    assert_eq!(
        primary.plugin("alpha").unwrap().compact_role(),
        PluginRole::Observer
    );
    assert_eq!(
        primary.plugin("alpha").unwrap().roles,
        [PluginRole::Observer]
    );
}

#[test]
fn the_compactor_rule_is_per_agent() {
    let res = ok(&fixture("compactors.yaml"));
    assert!(events(&res, RESEARCHER, AuditEvent::RoleViolation).is_empty());
    assert_eq!(res.agent(RESEARCHER).unwrap().keys(), ["squeeze"]);
}

#[test]
fn a_compactor_without_delegation_is_active_as_a_plain_plugin() {
    let res = ok(&fixture("compactors.yaml"));
    let r = res.agent(RESEARCHER).unwrap();
    assert_eq!(r.compactor, None);
    let squeeze = r.plugin("squeeze").unwrap();
    assert!(squeeze.roles.is_empty(), "{:?}", squeeze.roles);
    assert_eq!(squeeze.compact_role(), PluginRole::Observer);
    assert_eq!(squeeze.config["license_key"], "lic-42");
    let fired = res.hooks_to_fire(RESEARCHER, HookName::PreCompact);
    assert_eq!(fired.len(), 1);
    assert!(!fired[0].is_compactor());
}

#[test]
fn delegation_may_name_the_plugin_instead_of_the_key() {
    let res = ok(&inline(
        "primary:\n  plugins:\n    squeeze:\n      package: \"@example/smart-compactor\"\n\
         \x20 compaction:\n    delegate:\n      plugin: smart-compactor\n",
    ));
    assert_eq!(
        res.agent("primary").unwrap().compactor.as_deref(),
        Some("squeeze")
    );
}

#[test]
fn delegating_to_an_undeclared_plugin_is_an_error() {
    let e = err(&inline(
        "primary:\n  plugins:\n    audit:\n      package: \"@kaged/audit-sink\"\n\
         \x20 compaction:\n    delegate:\n      plugin: memory\n",
    ));
    match &e.errors[..] {
        [ResolveError::DelegateUnknown {
            agent_path,
            plugin,
            at,
        }] => {
            assert_eq!(
                (agent_path.as_str(), plugin.as_str()),
                ("primary", "memory")
            );
            assert_eq!((at.line, at.column), (7, 15));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn delegating_to_a_plugin_without_the_compactor_role_is_an_error() {
    let e = err(&inline(
        "primary:\n  plugins:\n    audit:\n      package: \"@kaged/audit-sink\"\n\
         \x20 compaction:\n    delegate:\n      plugin: audit\n",
    ));
    assert!(
        matches!(&e.errors[..], [ResolveError::DelegateNotCompactor { plugin, .. }] if plugin == "audit"),
        "{e}"
    );
}

#[test]
fn a_delegate_not_subscribed_to_pre_compact_on_the_agent_is_an_error() {
    let e = err(&inline(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-hindsight\"\n      hooks: [post_compact]\n\
         \x20 compaction:\n    delegate:\n      plugin: memory\n",
    ));
    assert!(
        matches!(
            &e.errors[..],
            [ResolveError::DelegateWithoutPreCompact { .. }]
        ),
        "{e}"
    );
}

#[test]
fn delegating_to_the_refused_second_compactor_leaves_no_compactor() {
    let res = ok(&inline(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-hindsight\"\n\
         \x20   squeeze:\n      package: \"@example/smart-compactor\"\n\
         \x20 compaction:\n    delegate:\n      plugin: squeeze\n",
    ));
    let primary = res.agent("primary").unwrap();
    assert_eq!(events(&res, "primary", AuditEvent::RoleViolation).len(), 1);
    assert_eq!(primary.compactor, None);
    assert_eq!(
        primary.warnings,
        [ResolveWarning::DelegateInactive {
            agent_path: "primary".into(),
            plugin: "squeeze".into()
        }]
    );
    assert!(primary.plugin("memory").unwrap().roles == [PluginRole::Observer]);
}

#[test]
fn a_compactor_that_failed_to_load_does_not_claim_the_role() {
    // No local config: memory-hindsight's required api_token is missing.
    let project = kaged_host_engine::agents::Project::from_yaml_str(
        "primary:\n  plugins:\n    memory:\n      package: \"@kaged/memory-hindsight\"\n\
         \x20   squeeze:\n      package: \"@example/smart-compactor\"\n\
         \x20 compaction:\n    delegate:\n      plugin: squeeze\n",
        "p.yaml",
    )
    .unwrap();
    let res = ok(&project);
    assert_eq!(
        events(&res, "primary", AuditEvent::ConfigValidationFailed).len(),
        1
    );
    assert!(res.events_of(AuditEvent::RoleViolation).is_empty());
    assert_eq!(
        res.agent("primary").unwrap().compactor.as_deref(),
        Some("squeeze")
    );
}
