//! The type-specific fields of one knob (`plugin-host.md` § Plugin knob
//! schema, "Knob types"), its `default` checked with [`KnobBounds`].

use kaged_plugin_protocol::manifest::YamlNode;

use super::knob_types::KnobType;
use super::knob_value::{KnobBounds, KnobValueError};
use super::locate::{child, Ctx};
use super::rule::Rule;

/// Values of a `model_alias` knob's `filter`.
pub const MODEL_FILTERS: [&str; 3] = ["any", "reasoning", "fast"];
/// Values a `path` knob's `prefixes` may hold.
pub const PATH_PREFIXES: [&str; 2] = ["project:", "config:"];

/// Check the type-specific fields of one knob (presence is checked by the
/// caller).
pub(crate) fn check_fields(ctx: &mut Ctx, knob: &YamlNode, kp: &str, kind: KnobType) {
    let get = |key: &str| knob.get(key).map(|n| (n, child(kp, key)));
    match kind {
        KnobType::Range | KnobType::IntRange => check_range(ctx, knob, kp, kind),
        KnobType::Enum => check_enum(ctx, knob, kp),
        KnobType::Boolean => {
            if let Some((n, p)) = get("default") {
                ctx.boolean(n, &p);
            }
        }
        KnobType::Text | KnobType::Multiline => check_text(ctx, knob, kp, kind),
        KnobType::ModelAlias => {
            if let Some((n, p)) = get("default") {
                if !n.is_null() {
                    ctx.string(n, &p);
                }
            }
            if let Some((n, p)) = get("filter") {
                if let Some(f) = ctx.string(n, &p) {
                    if !MODEL_FILTERS.contains(&f) {
                        ctx.at(
                            Rule::KnobFilter,
                            n,
                            &p,
                            format!("filter `{f}` must be one of any, reasoning, fast"),
                        );
                    }
                }
            }
        }
        KnobType::Path => check_path(ctx, knob, kp),
    }
}

fn check_range(ctx: &mut Ctx, knob: &YamlNode, kp: &str, kind: KnobType) {
    let mut num = |key: &str| -> Option<(f64, &YamlNode, String)> {
        let n = knob.get(key)?;
        let p = child(kp, key);
        let v = if kind == KnobType::IntRange {
            ctx.integer(n, &p).map(|i| i as f64)
        } else {
            ctx.number(n, &p)
        }?;
        Some((v, n, p))
    };
    let (min, max, step, default) = (num("min"), num("max"), num("step"), num("default"));
    if let Some((s, n, p)) = &step {
        if *s <= 0.0 {
            ctx.at(
                Rule::KnobBounds,
                n,
                p,
                format!("step {s} must be greater than 0"),
            );
        }
    }
    let (Some((lo, _, _)), Some((hi, hn, hp))) = (&min, &max) else {
        return;
    };
    if lo > hi {
        ctx.at(
            Rule::KnobBounds,
            hn,
            hp,
            format!("max {hi} is below min {lo}"),
        );
        return;
    }
    let bounds = KnobBounds {
        min: Some(*lo),
        max: Some(*hi),
        ..KnobBounds::default()
    };
    if let Some((d, n, p)) = &default {
        if bounds.check_number(*d).is_err() {
            ctx.at(
                Rule::KnobDefaultOutOfRange,
                n,
                p,
                format!("default {d} is outside min..=max ({lo}..={hi})"),
            );
        }
    }
}

fn check_enum(ctx: &mut Ctx, knob: &YamlNode, kp: &str) {
    let mut values: Vec<&str> = Vec::new();
    if let Some(v) = knob.get("values") {
        let vp = child(kp, "values");
        let entries = ctx.strings(v, &vp);
        if v.as_seq().is_some_and(<[YamlNode]>::is_empty) {
            ctx.at(Rule::KnobEnumValues, v, &vp, "`values` must not be empty");
        }
        for (_, n, s, p) in entries {
            if values.contains(&s) {
                ctx.at(
                    Rule::KnobEnumValues,
                    n,
                    &p,
                    format!("value `{s}` is repeated"),
                );
            }
            values.push(s);
        }
    }
    if let Some(d) = knob.get("default") {
        let dp = child(kp, "default");
        let bounds = KnobBounds {
            values: Some(values.clone()),
            ..KnobBounds::default()
        };
        if let Some(s) = ctx.string(d, &dp) {
            let listed = knob.get("values").is_some_and(|v| v.as_seq().is_some());
            if listed && !bounds.check_str(s).is_empty() {
                ctx.at(
                    Rule::KnobDefaultNotInValues,
                    d,
                    &dp,
                    format!("default `{s}` is not one of values [{}]", values.join(", ")),
                );
            }
        }
    }
    if let Some(l) = knob.get("labels") {
        let lp = child(kp, "labels");
        for (k, label) in ctx.map(l, &lp).unwrap_or_default() {
            let key = k.key_text();
            let p = child(&lp, &key);
            ctx.string(label, &p);
            if !values.contains(&key.as_str()) {
                ctx.at(
                    Rule::KnobLabelsUnknownValue,
                    k,
                    &p,
                    format!("label key `{key}` is not one of values"),
                );
            }
        }
    }
}

fn check_text(ctx: &mut Ctx, knob: &YamlNode, kp: &str, kind: KnobType) {
    let default = knob
        .get("default")
        .and_then(|n| ctx.string(n, &child(kp, "default")).map(|s| (n, s)));
    let mut max_length = None;
    if let Some(n) = knob.get("max_length") {
        let p = child(kp, "max_length");
        if let Some(max) = ctx.integer(n, &p) {
            match u64::try_from(max) {
                Ok(max) => max_length = Some(max),
                Err(_) => ctx.at(
                    Rule::KnobBounds,
                    n,
                    &p,
                    format!("max_length {max} is negative"),
                ),
            }
        }
    }
    // `pattern` is a text-only field (on multiline it is an unknown field).
    let mut pattern = None;
    if let Some(n) = knob.get("pattern").filter(|_| kind == KnobType::Text) {
        let p = child(kp, "pattern");
        if let Some(pat) = ctx.string(n, &p) {
            match regex::Regex::new(pat) {
                Err(e) => ctx.at(
                    Rule::KnobPattern,
                    n,
                    &p,
                    format!("pattern is not a valid regex: {e}"),
                ),
                Ok(re) => pattern = Some((pat, re)),
            }
        }
    }
    let Some((dn, d)) = default else { return };
    let bounds = KnobBounds {
        max_length,
        pattern: pattern.as_ref().map(|(_, re)| re),
        ..KnobBounds::default()
    };
    for violation in bounds.check_str(d) {
        let message = match violation {
            KnobValueError::TooLong { len, max } => {
                format!("default has {len} characters; max_length is {max}")
            }
            KnobValueError::NoPatternMatch => {
                let pat = pattern.as_ref().map_or("", |(p, _)| p);
                format!("default `{d}` does not match pattern `{pat}`")
            }
            _ => continue,
        };
        ctx.at(
            Rule::KnobDefaultOutOfRange,
            dn,
            &child(kp, "default"),
            message,
        );
    }
}

fn check_path(ctx: &mut Ctx, knob: &YamlNode, kp: &str) {
    let mut prefixes: Vec<&str> = Vec::new();
    if let Some(v) = knob.get("prefixes") {
        let pp = child(kp, "prefixes");
        let entries = ctx.strings(v, &pp);
        if v.as_seq().is_some_and(<[YamlNode]>::is_empty) {
            ctx.at(Rule::KnobPrefixes, v, &pp, "`prefixes` must not be empty");
        }
        for (_, n, s, p) in entries {
            if PATH_PREFIXES.contains(&s) {
                prefixes.push(s);
            } else {
                ctx.at(
                    Rule::KnobPrefixes,
                    n,
                    &p,
                    format!("prefix `{s}` must be `project:` or `config:`"),
                );
            }
        }
    }
    if let Some(n) = knob.get("default") {
        let p = child(kp, "default");
        let bounds = KnobBounds {
            prefixes: Some(prefixes.clone()),
            ..KnobBounds::default()
        };
        if let Some(d) = ctx.string(n, &p) {
            if !prefixes.is_empty() && !bounds.check_str(d).is_empty() {
                ctx.at(
                    Rule::KnobPathDefault,
                    n,
                    &p,
                    format!(
                        "default `{d}` does not start with one of [{}]",
                        prefixes.join(", ")
                    ),
                );
            }
        }
    }
    if let Some(n) = knob.get("must_exist") {
        ctx.boolean(n, &child(kp, "must_exist"));
    }
}
