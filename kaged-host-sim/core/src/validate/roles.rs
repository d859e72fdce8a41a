//! `roles` and `hooks`: closed value sets, the role default, and role
//! consistency (a compactor subscribes to `pre_compact`).

use kaged_plugin_protocol::manifest::YamlNode;
use kaged_plugin_protocol::{HookName, PluginRole};

use super::fields::field;
use super::locate::Ctx;
use super::rule::Rule;

/// Role names a manifest may claim.
pub const ROLE_NAMES: [&str; 2] = [
    PluginRole::Observer.as_str(),
    PluginRole::Compactor.as_str(),
];

/// Check `roles` and `hooks`.
pub(crate) fn check(ctx: &mut Ctx, root: &YamlNode) {
    let hooks = root
        .get("hooks")
        .map(|v| ctx.strings(v, "hooks"))
        .unwrap_or_default();
    let mut seen_hooks: Vec<&str> = Vec::new();
    for (_, node, hook, p) in &hooks {
        if HookName::parse(hook).is_none() {
            let known: Vec<&str> = HookName::ALL.iter().map(|h| h.as_str()).collect();
            ctx.at(
                Rule::HookUnknown,
                node,
                p,
                format!("unknown hook `{hook}`; hooks are {}", known.join(", ")),
            );
        } else if seen_hooks.contains(hook) {
            ctx.at(
                Rule::HookDuplicate,
                node,
                p,
                format!("hook `{hook}` is listed twice"),
            );
        }
        seen_hooks.push(hook);
    }

    let Some(roles_node) = field(root, "roles") else {
        return;
    };
    let roles = ctx.strings(roles_node, "roles");
    let mut seen_roles: Vec<&str> = Vec::new();
    for (_, node, role, p) in &roles {
        if !ROLE_NAMES.contains(role) {
            ctx.at(
                Rule::RoleUnknown,
                node,
                p,
                format!("unknown role `{role}`; roles are observer, compactor"),
            );
        } else if seen_roles.contains(role) {
            ctx.at(
                Rule::RoleDuplicate,
                node,
                p,
                format!("role `{role}` is listed twice"),
            );
        }
        seen_roles.push(role);
        if *role == PluginRole::Compactor.as_str()
            && !seen_roles[..seen_roles.len() - 1].contains(role)
            && !seen_hooks.contains(&HookName::PreCompact.as_str())
        {
            ctx.at(
                Rule::CompactorRequiresPreCompact,
                node,
                p,
                "role `compactor` requires `pre_compact` in `hooks`",
            );
        }
    }
    if roles_node.as_seq().is_some_and(<[YamlNode]>::is_empty) && !hooks.is_empty() {
        ctx.at(
            Rule::RolesEmptyWithHooks,
            roles_node,
            "roles",
            "`roles: []` with hooks: the hooks fire, but without the observer role its `inject` and `retain` answers are ignored (and audited `plugin.role_violation`); omit `roles` for the observer default",
        );
    }
}
