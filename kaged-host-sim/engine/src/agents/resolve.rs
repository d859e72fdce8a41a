//! Per-agent resolution: which plugins are active on each agent, in
//! declaration order, with which hooks, config, roles and tools.
//!
//! Every agent is resolved on its own (no inheritance: a plugin declared on
//! the primary is not active on a subagent that does not declare it). Each
//! declaration goes through, in order, stopping at its first failure:
//!
//! 1. the cascade ([`super::cascade`]) — errors are configuration errors;
//! 2. the package lookup in the [`Catalogue`] — unknown: configuration error;
//!    a plugin named like a built-in namespace: [`ResolveWarning::BuiltinNamespace`];
//! 3. hooks — each listed hook must be a defined hook **and** be in the
//!    manifest's `hooks` (else a configuration error); `hooks:` omitted means
//!    the manifest's hooks. On a subagent, `on_session_start` /
//!    `on_session_idle` written in the (effective) declaration emit
//!    `plugin.hook.illegal` and are left out of the agent's firing list
//!    (those coming from the manifest default are left out silently);
//! 4. config ([`super::config`]) — a failing side emits
//!    `plugin.config_validation_failed` and the plugin is not active here;
//! 5. the compactor role — a plugin whose manifest roles include
//!    `compactor` *claims* the role on every agent that declares it,
//!    whether or not it is designated. The first claimant active on the
//!    agent (declaration order = load order) keeps it; every later claimant
//!    emits `plugin.role_violation` `{first, second, agent_path}` and is not
//!    active on that agent;
//! 6. tools ([`super::tools`]) — an invalid registered name emits
//!    `plugin.failed` (`reason: tool_name_invalid`), a collision on the agent
//!    emits `plugin.tool_name_collision` `{first, second, tool}`; either way
//!    the plugin is not active on that agent (the first stays). Every tool
//!    not opted out by the agent's `tools:` block emits
//!    `plugin.tool_registered` `{name, tool, agent_path}`.
//!
//! Then `compaction.delegate.plugin` (a declaration key on the agent, or
//! failing that a plugin name declared there) designates the compactor: it
//! must name a declared plugin (else [`ResolveError::DelegateUnknown`]); an
//! active one must claim `compactor` and receive `pre_compact` on the agent
//! (else an error); one that is declared but not active (refused, failed)
//! leaves the agent without a compactor, with
//! [`ResolveWarning::DelegateInactive`]. Without a delegation no plugin is
//! the compactor, even one that claims the role.

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::{HookName, PluginRole};
use serde_json::{json, Value};

use super::cascade::{cascade, Effective};
use super::catalogue::Catalogue;
use super::config::merge_config;
use super::error::{ResolveError, ResolveErrors, ResolveWarning};
use super::event::HostEvent;
use super::project::{AgentSpec, Project};
use super::resolution::{ActivePlugin, AgentResolution, Resolution};
use super::tools::{is_builtin_namespace, ToolRegistry, ToolRejection};
use kaged_host_core::audit::AuditEvent;

/// Resolve every agent of `project` against `catalogue`.
///
/// Configuration errors (see [`ResolveError`]) fail the whole resolution;
/// every one is reported, with the events produced so far. Conditions the
/// spec handles by refusing one plugin (config validation, role violation,
/// tool collision) are events, and the resolution succeeds without that
/// plugin on that agent.
pub fn resolve(project: &Project, catalogue: &Catalogue) -> Result<Resolution, ResolveErrors> {
    let mut errors = Vec::new();
    let mut resolution = Resolution::default();
    for agent in project.agents() {
        resolution
            .agents
            .push(resolve_agent(project, catalogue, agent, &mut errors));
    }
    if errors.is_empty() {
        Ok(resolution)
    } else {
        Err(ResolveErrors {
            errors,
            events: resolution.events().into_iter().cloned().collect(),
        })
    }
}

/// A declaration that passed cascade and lookup, with its manifest roles.
struct Pending {
    active: ActivePlugin,
    manifest_roles: Vec<PluginRole>,
}

struct AgentState<'p> {
    project: &'p Project,
    agent: &'p AgentSpec,
    out: AgentResolution,
    registry: ToolRegistry,
    claimant: Option<String>,
    /// Every declaration key with its plugin name when it resolved.
    declared: Vec<(String, Option<String>)>,
    pending: Vec<Pending>,
}

impl AgentState<'_> {
    fn event(&mut self, event: AuditEvent, plugin: &str, mut data: Value) {
        if let Value::Object(o) = &mut data {
            o.entry("name")
                .or_insert_with(|| Value::String(plugin.to_string()));
        }
        self.out.events.push(HostEvent {
            event,
            plugin: plugin.to_string(),
            data,
        });
    }
}

fn resolve_agent(
    project: &Project,
    catalogue: &Catalogue,
    agent: &AgentSpec,
    errors: &mut Vec<ResolveError>,
) -> AgentResolution {
    let mut st = AgentState {
        project,
        agent,
        out: AgentResolution {
            path: agent.path.clone(),
            ..AgentResolution::default()
        },
        registry: ToolRegistry::new(),
        claimant: None,
        declared: Vec::new(),
        pending: Vec::new(),
    };
    for decl in &agent.plugins {
        let eff = match cascade(project, agent, decl) {
            Ok(e) => e,
            Err(e) => {
                errors.push(*e);
                st.declared.push((decl.key.clone(), None));
                continue;
            }
        };
        let Some(manifest) = catalogue.get(&eff.package.value) else {
            errors.push(ResolveError::UnknownPackage {
                at: project.source_pos(eff.package.pos),
                agent_path: agent.path.clone(),
                key: decl.key.clone(),
                package: eff.package.value.clone(),
                declared_source: eff
                    .source
                    .as_ref()
                    .map(|s| project.resolve_source(&s.value)),
            });
            st.declared.push((decl.key.clone(), None));
            continue;
        };
        if let Some(required) = &eff.version {
            if !version_meets(&manifest.version, &required.value) {
                errors.push(ResolveError::VersionMismatch {
                    at: project.source_pos(required.pos),
                    agent_path: agent.path.clone(),
                    key: decl.key.clone(),
                    package: eff.package.value.clone(),
                    required: required.value.clone(),
                    installed: manifest.version.clone(),
                });
                st.declared.push((decl.key.clone(), None));
                continue;
            }
        }
        st.declared
            .push((decl.key.clone(), Some(manifest.name.clone())));
        if let Err(mut e) = load(&mut st, &eff, manifest) {
            errors.append(&mut e);
        }
    }
    designate(&mut st, errors);
    let compactor = st.out.compactor.clone();
    for p in std::mem::take(&mut st.pending) {
        let mut active = p.active;
        let designated = compactor.as_deref() == Some(active.key.as_str());
        active.roles = p
            .manifest_roles
            .into_iter()
            .filter(|r| designated || *r != PluginRole::Compactor)
            .collect();
        st.out.plugins.push(active);
    }
    st.out
}

/// Steps 2 (warning) to 6 for one declaration; `Err` holds configuration
/// errors, `Ok` covers both "active" and "refused with an event".
fn load(
    st: &mut AgentState<'_>,
    eff: &Effective<'_>,
    m: &Manifest,
) -> Result<(), Vec<ResolveError>> {
    let path = st.agent.path.clone();
    if is_builtin_namespace(&m.name) {
        st.out.warnings.push(ResolveWarning::BuiltinNamespace {
            agent_path: path.clone(),
            plugin: m.name.clone(),
        });
    }
    let (declared_hooks, hooks) = hooks(st, eff, m)?;

    let system = st.project.system.get(&eff.package.value);
    let config = match merge_config(m, &eff.config, system) {
        Ok(c) => {
            if !c.collisions.is_empty() {
                tracing::warn!(plugin = %m.name, agent_path = %path, keys = ?c.collisions,
                    "config keys set both in the project and in local.toml: the project values are used");
                st.out.warnings.push(ResolveWarning::ConfigCollision {
                    agent_path: path.to_string(),
                    plugin: m.name.clone(),
                    keys: c.collisions.clone(),
                });
            }
            c
        }
        Err(failures) => {
            for f in failures {
                st.event(
                    AuditEvent::ConfigValidationFailed,
                    &m.name,
                    json!({"side": f.side.as_str(), "errors": f.errors,
                           "agent_path": path, "key": eff.key}),
                );
            }
            return Ok(());
        }
    };

    let manifest_roles = m.effective_roles();
    let claims = manifest_roles.contains(&PluginRole::Compactor);
    if let (true, Some(first)) = (claims, st.claimant.clone()) {
        st.event(
            AuditEvent::RoleViolation,
            &m.name,
            json!({"first": first, "second": m.name, "agent_path": path, "key": eff.key}),
        );
        return Ok(());
    }

    let tools = match st.registry.check(m) {
        Ok(t) => t,
        Err(ToolRejection::Collision {
            tool,
            first,
            first_key,
        }) => {
            st.event(
                AuditEvent::ToolNameCollision,
                &m.name,
                json!({"first": first, "second": m.name, "tool": tool, "agent_path": path,
                       "first_key": first_key, "second_key": eff.key}),
            );
            return Ok(());
        }
        Err(ToolRejection::InvalidName { tool }) | Err(ToolRejection::Duplicate { tool }) => {
            st.event(
                AuditEvent::Failed,
                &m.name,
                json!({"reason": "tool_name_invalid", "tool": tool, "agent_path": path,
                       "key": eff.key}),
            );
            return Ok(());
        }
    };
    st.registry.add(&m.name, eff.key, &tools);
    if claims {
        st.claimant = Some(m.name.clone());
    }
    let kept: Vec<String> = tools
        .into_iter()
        .filter(|t| !st.agent.tools_disabled.contains(t))
        .collect();
    for t in &kept {
        st.event(
            AuditEvent::ToolRegistered,
            &m.name,
            json!({"tool": t, "agent_path": path}),
        );
        st.out.tools.push(t.clone());
    }
    st.pending.push(Pending {
        active: ActivePlugin {
            key: eff.key.to_string(),
            package: eff.package.value.clone(),
            name: m.name.clone(),
            isolation: eff.isolation,
            declared_hooks,
            hooks,
            config: config.merged,
            project_config: config.project,
            system_config: config.system,
            roles: Vec::new(),
            tools: kept,
        },
        manifest_roles,
    });
    Ok(())
}

/// The declared hooks and the firing hooks of one declaration on this agent.
type Hooks = (Vec<HookName>, Vec<HookName>);

fn hooks(
    st: &mut AgentState<'_>,
    eff: &Effective<'_>,
    m: &Manifest,
) -> Result<Hooks, Vec<ResolveError>> {
    let subscribed = m.hook_names();
    let mut declared: Vec<HookName> = Vec::new();
    let mut errors = Vec::new();
    match eff.hooks {
        Some(written) => {
            for h in written {
                let at = st.project.source_pos(h.pos);
                match HookName::parse(&h.value) {
                    None => errors.push(ResolveError::UnknownHook {
                        at,
                        agent_path: st.agent.path.clone(),
                        key: eff.key.to_string(),
                        hook: h.value.clone(),
                    }),
                    Some(hook) if !subscribed.contains(&hook) => {
                        errors.push(ResolveError::UndeclaredHook {
                            at,
                            agent_path: st.agent.path.clone(),
                            key: eff.key.to_string(),
                            plugin: m.name.clone(),
                            hook: hook.as_str().to_string(),
                        })
                    }
                    Some(hook) if !declared.contains(&hook) => declared.push(hook),
                    Some(_) => {}
                }
            }
        }
        None => {
            for hook in subscribed {
                if !declared.contains(&hook) {
                    declared.push(hook);
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let primary = st.agent.is_primary();
    if !primary && eff.hooks.is_some() {
        let path = st.agent.path.clone();
        for hook in declared.iter().filter(|h| h.primary_only()) {
            st.event(
                AuditEvent::HookIllegal,
                &m.name,
                json!({"hook": hook.as_str(), "agent_path": path, "key": eff.key}),
            );
        }
    }
    let firing = declared
        .iter()
        .copied()
        .filter(|h| primary || !h.primary_only())
        .collect();
    Ok((declared, firing))
}

fn designate(st: &mut AgentState<'_>, errors: &mut Vec<ResolveError>) {
    let Some(d) = st.agent.compaction_delegate.as_ref() else {
        return;
    };
    let at = st.project.source_pos(d.pos);
    let agent_path = st.agent.path.clone();
    let key = st
        .declared
        .iter()
        .find(|(k, _)| *k == d.value)
        .or_else(|| {
            st.declared
                .iter()
                .find(|(_, n)| n.as_deref() == Some(d.value.as_str()))
        })
        .map(|(k, _)| k.clone());
    let Some(key) = key else {
        errors.push(ResolveError::DelegateUnknown {
            at,
            agent_path,
            plugin: d.value.clone(),
        });
        return;
    };
    let Some(p) = st.pending.iter().find(|p| p.active.key == key) else {
        st.out.warnings.push(ResolveWarning::DelegateInactive {
            agent_path,
            plugin: d.value.clone(),
        });
        return;
    };
    if !p.manifest_roles.contains(&PluginRole::Compactor) {
        errors.push(ResolveError::DelegateNotCompactor {
            at,
            agent_path,
            plugin: d.value.clone(),
        });
    } else if !p.active.hooks.contains(&HookName::PreCompact) {
        errors.push(ResolveError::DelegateWithoutPreCompact {
            at,
            agent_path,
            plugin: d.value.clone(),
        });
    } else {
        st.out.compactor = Some(key);
    }
}

/// Whether `installed` (a manifest's semver version) meets `required` (a
/// semver requirement, checked when the project was loaded); a version
/// that does not parse meets nothing.
///
/// ```
/// use kaged_host_engine::agents::resolve::version_meets;
/// assert!(version_meets("1.4.2", "^1.4"));
/// assert!(!version_meets("2.0.0", "^1.4"));
/// ```
pub fn version_meets(installed: &str, required: &str) -> bool {
    match (
        semver::Version::parse(installed),
        semver::VersionReq::parse(required),
    ) {
        (Ok(v), Ok(req)) => req.matches(&v),
        _ => false,
    }
}
