//! `tools`, `methods` and `notifications`: naming rules, the registered
//! tool name, duplicates, and tool argument schemas.

use kaged_plugin_protocol::manifest::YamlNode;
use kaged_plugin_protocol::methods::SYSTEM_METHODS;
use kaged_plugin_protocol::names;

use super::locate::{child, item, Ctx};
use super::rule::Rule;
use super::schemas::check_schema;

/// The keys of a tool entry.
pub const TOOL_KEYS: [&str; 3] = ["name", "description", "parameters_schema"];

/// Check `tools`; returns the prefixed names of the well-formed tools.
pub(crate) fn check_tools(ctx: &mut Ctx, root: &YamlNode) -> Vec<String> {
    // Registered names are only checked under a valid plugin name (an
    // invalid one is reported once, as `name_format`).
    let plugin = root
        .get("name")
        .and_then(YamlNode::as_str)
        .filter(|n| names::is_plugin_name(n));
    let mut prefixed = Vec::new();
    let Some(v) = root.get("tools") else {
        return prefixed;
    };
    let Some(tools) = ctx.seq(v, "tools") else {
        return prefixed;
    };
    let mut seen: Vec<&str> = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let tp = item("tools", i);
        let Some(entries) = ctx.map(tool, &tp) else {
            continue;
        };
        for (k, _) in entries {
            let key = k.key_text();
            if !TOOL_KEYS.contains(&key.as_str()) {
                ctx.at(
                    Rule::UnknownKey,
                    k,
                    &child(&tp, &key),
                    format!("unknown key `{key}` in a tool declaration"),
                );
            }
        }
        match tool.get("description") {
            None => ctx.at(
                Rule::ToolDescriptionMissing,
                tool,
                &child(&tp, "description"),
                "tool has no `description` (the model sees it to pick the tool)",
            ),
            Some(d) => {
                ctx.string(d, &child(&tp, "description"));
            }
        }
        let sp = child(&tp, "parameters_schema");
        match tool.get("parameters_schema") {
            None => ctx.at(
                Rule::MissingField,
                tool,
                &sp,
                "tool has no `parameters_schema`",
            ),
            Some(s) => {
                check_schema(
                    ctx,
                    s,
                    &sp,
                    Rule::ToolSchemaInvalid,
                    Rule::ToolSchemaNotObject,
                );
            }
        }
        let np = child(&tp, "name");
        let Some(name_node) = tool.get("name") else {
            ctx.at(Rule::MissingField, tool, &np, "tool has no `name`");
            continue;
        };
        let Some(name) = ctx.string(name_node, &np) else {
            continue;
        };
        if !names::is_tool_name(name) {
            ctx.at(
                Rule::ToolNameFormat,
                name_node,
                &np,
                format!(
                    "tool name `{name}` does not match ^[a-z][a-z0-9_]*$ (one lowercase segment)"
                ),
            );
        } else if let Some(plugin) = plugin {
            let full = names::prefixed_tool_name(plugin, name);
            if names::is_registered_tool_name(&full) {
                prefixed.push(full);
            } else {
                ctx.at(
                    Rule::ToolRegisteredName,
                    name_node,
                    &np,
                    format!("registered name `{full}` does not match ^[a-z][a-z0-9-]+\\.[a-z][a-z0-9_]*$"),
                );
            }
        }
        if seen.contains(&name) {
            ctx.at(
                Rule::ToolDuplicate,
                name_node,
                &np,
                format!("tool `{name}` is declared twice"),
            );
        }
        seen.push(name);
    }
    prefixed
}

/// Check `methods` (custom methods) against the naming rules, duplicates
/// and the prefixed tool names.
pub(crate) fn check_methods(ctx: &mut Ctx, root: &YamlNode, tool_names: &[String]) {
    let Some(v) = root.get("methods") else { return };
    let methods = ctx.strings(v, "methods");
    let mut seen: Vec<&str> = Vec::new();
    for (_, node, method, p) in &methods {
        if seen.contains(method) {
            ctx.at(
                Rule::MethodDuplicate,
                node,
                p,
                format!("method `{method}` is listed twice"),
            );
        } else if tool_names.iter().any(|t| t == method) {
            // A prefixed tool name is already a declared method (ADDENDUM §1)
            // and exempt from the method regex: only the clash is reported.
            ctx.at(
                Rule::MethodToolCollision,
                node,
                p,
                format!("method `{method}` is also the registered name of a tool"),
            );
            seen.push(method);
            continue;
        }
        if SYSTEM_METHODS.contains(method) {
            ctx.at(
                Rule::MethodReserved,
                node,
                p,
                format!("`{method}` is a system method; it cannot be declared as a custom method"),
            );
        } else if let Some(why) = names::method_name_problem(method) {
            let rule = if names::RESERVED_METHOD_PREFIXES
                .iter()
                .any(|r| method.starts_with(r))
            {
                Rule::MethodReserved
            } else {
                Rule::MethodNameFormat
            };
            ctx.at(rule, node, p, why);
        }
        seen.push(method);
    }
}

/// Check `notifications`: the method naming rules; duplicates warn.
pub(crate) fn check_notifications(ctx: &mut Ctx, root: &YamlNode) {
    let Some(v) = root.get("notifications") else {
        return;
    };
    let notes = ctx.strings(v, "notifications");
    let mut seen: Vec<&str> = Vec::new();
    for (_, node, note, p) in &notes {
        if let Some(why) = names::method_name_problem(note) {
            let rule = if names::RESERVED_METHOD_PREFIXES
                .iter()
                .any(|r| note.starts_with(r))
            {
                Rule::NotificationReserved
            } else {
                Rule::NotificationNameFormat
            };
            ctx.at(
                rule,
                node,
                p,
                why.replacen("method name", "notification name", 1),
            );
        }
        if seen.contains(note) {
            ctx.at(
                Rule::NotificationDuplicate,
                node,
                p,
                format!("notification `{note}` is listed twice"),
            );
        }
        seen.push(note);
    }
}
