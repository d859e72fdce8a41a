//! The `isolation: project` cascade (§ Isolation, "Cascade pattern").
//!
//! For a declaration with key `K` on a subagent, when the primary declares
//! `K` with `isolation: project`:
//!
//! * the primary's declaration is the base (it supplies `package` and
//!   `isolation`);
//! * the subagent's block overrides field by field: `hooks:` replaces the
//!   base list when present; each top-level `config:` field overrides the
//!   base's field of the same name, the others are inherited;
//! * `package:` or `isolation:` written on the subagent with a value other
//!   than the base's is a [`ResolveError::CascadeOverride`] naming the agent
//!   and the field (restating the same value overrides nothing and is
//!   accepted).
//!
//! The base is always the primary's declaration, at every depth
//! (`primary.subagents.a.subagents.b` cascades from `primary`, not from
//! `a`). Otherwise (on the primary, or without an `isolation: project` base
//! on the primary) the declaration is self-contained and must name its
//! `package`; it never inherits anything.

use kaged_plugin_protocol::manifest::Pos;
use serde_json::{Map, Value};

use super::error::ResolveError;
use super::project::{AgentSpec, Isolation, Located, PluginDecl, Project};

/// A declaration after the cascade.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Effective<'a> {
    /// The declaration key.
    pub key: &'a str,
    /// Where the declaration (on this agent) starts.
    pub pos: Pos,
    /// The package, where it is written.
    pub package: Located<String>,
    /// The version requirement, where it is written.
    pub version: Option<Located<String>>,
    /// The source, where it is written.
    pub source: Option<Located<String>>,
    /// The isolation.
    pub isolation: Isolation,
    /// The hooks as written (on this agent, or inherited), `None` when
    /// neither block lists any.
    pub hooks: Option<&'a [Located<String>]>,
    /// The project-side config.
    pub config: Map<String, Value>,
}

/// Apply the cascade to `decl`, declared on `agent`.
pub(crate) fn cascade<'a>(
    project: &'a Project,
    agent: &'a AgentSpec,
    decl: &'a PluginDecl,
) -> Result<Effective<'a>, Box<ResolveError>> {
    let base = project
        .primary
        .plugin(&decl.key)
        .filter(|b| !agent.is_primary() && isolation_of(b) == Isolation::Project);
    if let Some(base) = base {
        return cascade_from(project, agent, base, decl);
    }
    let package = decl.package.clone().ok_or_else(|| {
        let reason = if agent.is_primary() {
            "every declaration on the primary must name its package".to_string()
        } else if project.primary.plugin(&decl.key).is_some() {
            format!(
                "`{}` is declared on the primary with isolation: agent, so each declaration is self-contained",
                decl.key
            )
        } else {
            format!(
                "no isolation: project declaration of `{}` on the primary to inherit from",
                decl.key
            )
        };
        Box::new(ResolveError::MissingPackage {
            at: project.source_pos(decl.pos),
            agent_path: agent.path.clone(),
            key: decl.key.clone(),
            reason,
        })
    })?;
    Ok(Effective {
        key: &decl.key,
        pos: decl.pos,
        package,
        version: decl.version.clone(),
        source: decl.source.clone(),
        isolation: isolation_of(decl),
        hooks: decl.hooks.as_deref(),
        config: decl.config.clone().unwrap_or_default(),
    })
}

fn isolation_of(decl: &PluginDecl) -> Isolation {
    decl.isolation.as_ref().map(|i| i.value).unwrap_or_default()
}

fn cascade_from<'a>(
    project: &'a Project,
    agent: &'a AgentSpec,
    base: &'a PluginDecl,
    decl: &'a PluginDecl,
) -> Result<Effective<'a>, Box<ResolveError>> {
    let Some(base_package) = base.package.clone() else {
        return Err(Box::new(ResolveError::MissingPackage {
            at: project.source_pos(decl.pos),
            agent_path: agent.path.clone(),
            key: decl.key.clone(),
            reason: "the primary's base declaration has no package".to_string(),
        }));
    };
    // A field the subagent's block writes with another value than the base.
    let overridden = |field: &'static str, pos: Pos, base: String, found: String| {
        Box::new(ResolveError::CascadeOverride {
            at: project.source_pos(pos),
            agent_path: agent.path.clone(),
            key: decl.key.clone(),
            field,
            base,
            found,
        })
    };
    if let Some(p) = decl
        .package
        .as_ref()
        .filter(|p| p.value != base_package.value)
    {
        return Err(overridden(
            "package",
            p.pos,
            base_package.value,
            p.value.clone(),
        ));
    }
    let base_version = base.version.as_ref().map(|b| &b.value);
    if let Some(v) = decl
        .version
        .as_ref()
        .filter(|v| Some(&v.value) != base_version)
    {
        let base = base_version.map_or_else(|| "no version".to_string(), String::clone);
        return Err(overridden("version", v.pos, base, v.value.clone()));
    }
    if let Some(i) = decl
        .isolation
        .as_ref()
        .filter(|i| i.value != Isolation::Project)
    {
        let base = Isolation::Project.as_str().to_string();
        return Err(overridden(
            "isolation",
            i.pos,
            base,
            i.value.as_str().to_string(),
        ));
    }
    let mut config = base.config.clone().unwrap_or_default();
    for (k, v) in decl.config.iter().flatten() {
        config.insert(k.clone(), v.clone());
    }
    Ok(Effective {
        key: &decl.key,
        pos: decl.pos,
        package: base_package,
        version: base.version.clone(),
        source: base.source.clone(),
        isolation: Isolation::Project,
        hooks: decl.hooks.as_deref().or(base.hooks.as_deref()),
        config,
    })
}
