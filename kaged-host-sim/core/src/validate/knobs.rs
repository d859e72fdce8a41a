//! `knobs`: names, common fields (`type`, `label`, `description`,
//! `binds_to`), type-specific fields ([`super::knob_fields`]), `binds_to`
//! validity and knob/config-field agreement (warnings).

use kaged_plugin_protocol::manifest::YamlNode;
use kaged_plugin_protocol::names;

use super::fields::field;
use super::knob_fields::check_fields;
use super::knob_types::KnobType;
use super::locate::{child, Ctx};
use super::rule::Rule;
use super::schemas::properties;

/// Fields every knob may carry.
pub const COMMON_KNOB_FIELDS: [&str; 4] = ["type", "label", "description", "binds_to"];
/// Maximum length of a knob `label`, in characters.
pub const MAX_LABEL_CHARS: usize = 64;
/// Maximum length of a knob `description`, in characters.
pub const MAX_KNOB_DESCRIPTION_CHARS: usize = 280;

/// Check `knobs`.
pub(crate) fn check(ctx: &mut Ctx, root: &YamlNode) {
    let Some(v) = root.get("knobs") else { return };
    let Some(knobs) = ctx.map(v, "knobs") else {
        return;
    };
    let mut bound: Vec<String> = Vec::new();
    for (key, knob) in knobs {
        let name = key.key_text();
        let kp = child("knobs", &name);
        if !names::is_knob_name(&name) {
            ctx.at(
                Rule::KnobNameFormat,
                key,
                &kp,
                format!("knob name `{name}` does not match [a-z][a-z0-9_]*"),
            );
        }
        if ctx.map(knob, &kp).is_none() {
            continue;
        }
        let kind = check_common(ctx, knob, &kp);
        if let Some(kind) = kind {
            check_field_set(ctx, knob, &kp, kind);
            check_fields(ctx, knob, &kp, kind);
        }
        let Some(field_name) = check_binds_to(ctx, root, knob, &kp) else {
            continue;
        };
        if bound.contains(&field_name) {
            if let Some(b) = knob.get("binds_to") {
                ctx.at(
                    Rule::KnobBindsToDuplicate,
                    b,
                    &child(&kp, "binds_to"),
                    format!("another knob already binds to config.{field_name}"),
                );
            }
        }
        if let (Some(kind), Some(schema)) = (kind, field(root, "config_schema")) {
            if let Some((_, _, field_schema)) = properties(schema)
                .into_iter()
                .find(|(_, n, _)| *n == field_name)
            {
                agreement(ctx, knob, &kp, kind, &field_name, field_schema);
            }
        }
        bound.push(field_name);
    }
}

/// `type`, `label`, `description`; returns the knob type when it is known.
fn check_common(ctx: &mut Ctx, knob: &YamlNode, kp: &str) -> Option<KnobType> {
    let tp = child(kp, "type");
    let kind = match knob.get("type") {
        None => {
            ctx.at(Rule::MissingField, knob, &tp, "knob has no `type`");
            None
        }
        Some(t) => ctx.string(t, &tp).and_then(|s| {
            let kind = KnobType::parse(s);
            if kind.is_none() {
                let all: Vec<&str> = KnobType::ALL.iter().map(|k| k.as_str()).collect();
                ctx.at(
                    Rule::KnobTypeUnknown,
                    t,
                    &tp,
                    format!("unknown knob type `{s}`; types are {}", all.join(", ")),
                );
            }
            kind
        }),
    };
    let lp = child(kp, "label");
    match knob.get("label") {
        None => ctx.at(Rule::MissingField, knob, &lp, "knob has no `label`"),
        Some(l) => {
            if let Some(label) = ctx.string(l, &lp) {
                let n = label.chars().count();
                if label.trim().is_empty() || n > MAX_LABEL_CHARS {
                    ctx.at(
                        Rule::KnobLabel,
                        l,
                        &lp,
                        format!("label must be 1..={MAX_LABEL_CHARS} characters, has {n}"),
                    );
                }
            }
        }
    }
    if let Some(d) = knob.get("description").filter(|d| !d.is_null()) {
        let dp = child(kp, "description");
        if let Some(text) = ctx.string(d, &dp) {
            let n = text.chars().count();
            if n > MAX_KNOB_DESCRIPTION_CHARS {
                ctx.at(
                    Rule::KnobDescriptionTooLong,
                    d,
                    &dp,
                    format!("description has {n} characters; max {MAX_KNOB_DESCRIPTION_CHARS}"),
                );
            }
        }
    }
    kind
}

/// Required type-specific fields present; unknown fields warned.
fn check_field_set(ctx: &mut Ctx, knob: &YamlNode, kp: &str, kind: KnobType) {
    for (f, required) in kind.fields() {
        if *required && knob.get(f).is_none() {
            ctx.at(
                Rule::MissingField,
                knob,
                &child(kp, f),
                format!("a `{}` knob requires `{f}`", kind.as_str()),
            );
        }
    }
    for (k, _) in knob.as_map().unwrap_or_default() {
        let key = k.key_text();
        let known = COMMON_KNOB_FIELDS.contains(&key.as_str())
            || kind.fields().iter().any(|(f, _)| *f == key);
        if !known {
            ctx.at(
                Rule::KnobUnknownField,
                k,
                &child(kp, &key),
                format!("`{key}` is not a field of a `{}` knob", kind.as_str()),
            );
        }
    }
}

/// `binds_to` is `config.<field>` with the field in `config_schema`;
/// returns the field name when the binding is valid.
fn check_binds_to(ctx: &mut Ctx, root: &YamlNode, knob: &YamlNode, kp: &str) -> Option<String> {
    let bp = child(kp, "binds_to");
    let Some(b) = knob.get("binds_to") else {
        ctx.at(Rule::MissingField, knob, &bp, "knob has no `binds_to`");
        return None;
    };
    let target = ctx.string(b, &bp)?;
    let in_props = |key: &str, f: &str| {
        field(root, key).is_some_and(|s| properties(s).iter().any(|(_, n, _)| n == f))
    };
    if let Some(f) = target.strip_prefix("system_config.") {
        ctx.at(
            Rule::KnobBindsToSystemConfig,
            b,
            &bp,
            format!("knob binds to system config `{f}`: knobs may only write project-side config"),
        );
        return None;
    }
    let f = match target.strip_prefix("config.") {
        Some(f) if !f.is_empty() && !f.contains('.') => f,
        _ => {
            ctx.at(
                Rule::KnobBindsToFormat,
                b,
                &bp,
                format!("binds_to `{target}` must be of the form config.<field>"),
            );
            return None;
        }
    };
    if in_props("config_schema", f) {
        return Some(f.to_owned());
    }
    if in_props("system_config_schema", f) {
        ctx.at(
            Rule::KnobBindsToSystemConfig,
            b,
            &bp,
            format!(
                "`{f}` is a system_config_schema field: knobs may only write project-side config"
            ),
        );
    } else {
        ctx.at(
            Rule::KnobBindsToUnknownField,
            b,
            &bp,
            format!("`{f}` is not a property of config_schema"),
        );
    }
    None
}

/// Warn when the knob's type disagrees with its bound config field.
fn agreement(ctx: &mut Ctx, knob: &YamlNode, kp: &str, kind: KnobType, f: &str, schema: &YamlNode) {
    let b = knob.get("binds_to").unwrap_or(knob);
    let bp = child(kp, "binds_to");
    let types: Vec<&str> = match schema.get("type") {
        Some(t) => match (t.as_str(), t.as_seq()) {
            (Some(s), _) => vec![s],
            (_, Some(list)) => list.iter().filter_map(YamlNode::as_str).collect(),
            _ => Vec::new(),
        },
        None => Vec::new(),
    };
    let expected: &[&str] = match kind {
        KnobType::Range => &["number", "integer"],
        KnobType::IntRange => &["integer"],
        KnobType::Boolean => &["boolean"],
        _ => &["string"],
    };
    if !types.is_empty() && !types.iter().any(|t| expected.contains(t)) {
        ctx.at(
            Rule::KnobSchemaMismatch,
            b,
            &bp,
            format!(
                "a `{}` knob writes {}, but config.{f} has type {}",
                kind.as_str(),
                expected.join(" or "),
                types.join(", ")
            ),
        );
    }
    if kind != KnobType::Enum {
        return;
    }
    let mut knob_values: Vec<&str> = knob
        .get("values")
        .and_then(YamlNode::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(YamlNode::as_str)
        .collect();
    let field_values: Option<Vec<&str>> = schema.get("enum").and_then(YamlNode::as_seq).map(|s| {
        let mut v: Vec<&str> = s.iter().filter_map(YamlNode::as_str).collect();
        v.sort_unstable();
        v
    });
    knob_values.sort_unstable();
    match field_values {
        Some(fv) if fv == knob_values => {}
        Some(fv) => ctx.at(
            Rule::KnobSchemaMismatch,
            b,
            &bp,
            format!(
                "enum knob values [{}] differ from config.{f} enum [{}]",
                knob_values.join(", "),
                fv.join(", ")
            ),
        ),
        None => ctx.at(
            Rule::KnobSchemaMismatch,
            b,
            &bp,
            format!("an enum knob needs config.{f} to be a string enum"),
        ),
    }
}
