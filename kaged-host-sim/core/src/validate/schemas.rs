//! JSON Schemas in the manifest: tool `parameters_schema`, `config_schema`
//! and `system_config_schema` must be valid (meta-schema validation, then
//! compilation) and describe an object; the two config schemas must declare
//! disjoint properties.

use kaged_plugin_protocol::manifest::YamlNode;

use super::fields::field;
use super::locate::{at_pointer, child, Ctx};
use super::rule::Rule;

/// Maximum length of a JSON Schema error message kept in a problem.
const MAX_MESSAGE_CHARS: usize = 300;

fn clip(s: &str) -> String {
    if s.chars().count() <= MAX_MESSAGE_CHARS {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(MAX_MESSAGE_CHARS).collect();
        out.push('…');
        out
    }
}

/// Check that `node` is a valid JSON Schema whose root is `type: object`.
/// Reports `invalid` for meta-schema or compilation errors, `not_object` for
/// a non-object root. Returns whether the schema is usable.
pub(crate) fn check_schema(
    ctx: &mut Ctx,
    node: &YamlNode,
    path: &str,
    invalid: Rule,
    not_object: Rule,
) -> bool {
    if node.as_map().is_none() {
        ctx.at(
            not_object,
            node,
            path,
            format!(
                "`{path}` must be a JSON Schema object with `type: object`, found {}",
                node.value.type_name()
            ),
        );
        return false;
    }
    stray_keys(ctx, node, path);
    let json = node.to_json();
    let before = ctx.problems.len();
    match jsonschema::meta::validator_for(&json) {
        Err(e) => ctx.at(
            invalid,
            node,
            path,
            clip(&format!("`{path}` is not a valid JSON Schema: {e}")),
        ),
        Ok(meta) => {
            for e in meta.iter_errors(&json) {
                let (at, p) = at_pointer(node, path, e.instance_path().as_str());
                ctx.at(invalid, at, &p, clip(&format!("invalid JSON Schema: {e}")));
            }
        }
    }
    if ctx.problems.len() == before {
        if let Err(e) = jsonschema::validator_for(&json) {
            ctx.at(
                invalid,
                node,
                path,
                clip(&format!("`{path}` does not compile as a JSON Schema: {e}")),
            );
        }
    }
    let valid = ctx.problems.len() == before;
    let is_object = match node.get("type") {
        Some(t) => match (t.as_str(), t.as_seq()) {
            (Some(s), _) => s == "object",
            (_, Some(list)) => list.len() == 1 && list[0].as_str() == Some("object"),
            _ => false,
        },
        None => false,
    };
    if !is_object {
        let (at, p) = match node.get("type") {
            Some(t) => (t, child(path, "type")),
            None => (node, path.to_owned()),
        };
        ctx.at(
            not_object,
            at,
            &p,
            format!("`{path}` must describe an object (`type: object`)"),
        );
    }
    valid && is_object
}

/// Warn of every key in `node` (a schema, walked whole) that has no value
/// and holds a space: `{type: string, description: The name, unique.}`
/// parses as a description `The name` and a key `unique.` without a
/// value, which a JSON Schema ignores as an unknown keyword. The text
/// wanted quotes.
fn stray_keys(ctx: &mut Ctx, node: &YamlNode, path: &str) {
    if let Some(seq) = node.as_seq() {
        for (i, item) in seq.iter().enumerate() {
            stray_keys(ctx, item, &format!("{path}[{i}]"));
        }
    }
    let Some(map) = node.as_map() else {
        return;
    };
    for (k, v) in map {
        let key = k.key_text();
        let here = child(path, &key);
        if v.is_null() && key.contains(char::is_whitespace) {
            ctx.at(
                Rule::SchemaStrayKey,
                k,
                &here,
                format!(
                    "`{here}` is a key without a value: the rest of a text cut at a comma in a YAML flow mapping? Quote the text (`description: \"..., {key}\"`)"
                ),
            );
        }
        stray_keys(ctx, v, &here);
    }
}

/// The property names of an object schema, with their key nodes.
pub(crate) fn properties(schema: &YamlNode) -> Vec<(&YamlNode, String, &YamlNode)> {
    schema
        .get("properties")
        .and_then(YamlNode::as_map)
        .unwrap_or_default()
        .iter()
        .map(|(k, v)| (k, k.key_text(), v))
        .collect()
}

/// Check `config_schema`, `system_config_schema` and their disjointness.
pub(crate) fn check(ctx: &mut Ctx, root: &YamlNode) {
    for key in ["config_schema", "system_config_schema"] {
        if let Some(schema) = field(root, key) {
            check_schema(
                ctx,
                schema,
                key,
                Rule::ConfigSchemaInvalid,
                Rule::ConfigSchemaNotObject,
            );
        }
    }
    let (Some(project), Some(system)) = (
        field(root, "config_schema"),
        field(root, "system_config_schema"),
    ) else {
        return;
    };
    let project_props = properties(project);
    for (key_node, name, _) in properties(system) {
        if project_props.iter().any(|(_, n, _)| *n == name) {
            ctx.at(
                Rule::ConfigSchemaOverlap,
                key_node,
                &format!("system_config_schema.properties.{name}"),
                format!(
                    "property `{name}` is declared in both config_schema and system_config_schema; a field is project-side or system-side, never both"
                ),
            );
        }
    }
}
