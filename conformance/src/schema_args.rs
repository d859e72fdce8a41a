//! Arguments generated from a JSON Schema: a value that satisfies it (for
//! `methods.tool_valid_args` and `config.update`) and one that breaks it
//! (for `methods.tool_invalid_args`). Both are checked with `jsonschema`
//! before use, so a schema the generator does not understand yields "could
//! not generate", never a wrong verdict.
//!
//! ```
//! use kaged_conformance::{args_breaking_schema, args_from_schema};
//! let schema = serde_json::json!({"type": "object", "required": ["text"],
//!     "properties": {"text": {"type": "string", "minLength": 3},
//!                    "n": {"type": "integer", "minimum": 2, "maximum": 5, "default": 4}}});
//! let v = args_from_schema(&schema).unwrap();
//! assert_eq!(v, serde_json::json!({"text": "conformance", "n": 4}));
//! let bad = args_breaking_schema(&schema).unwrap();
//! assert_eq!(bad.field, "text");
//! ```

use serde_json::{json, Map, Value};

/// Why no valid value could be generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    /// The schema itself does not compile.
    #[error("the schema does not compile: {0}")]
    BadSchema(String),
    /// The generated value does not satisfy the schema (a construct the
    /// generator does not understand, e.g. `pattern`).
    #[error("the generated value {value} does not satisfy the schema: {reason}")]
    Unsatisfied {
        /// The value tried.
        value: String,
        /// The first validation error.
        reason: String,
    },
}

/// Arguments that break a schema, and the field they break.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidArgs {
    /// The arguments.
    pub args: Value,
    /// The offending field.
    pub field: String,
    /// How it breaks the schema.
    pub how: String,
}

/// A value satisfying `schema`: defaults when given, `const`, the first
/// `enum` value, the first of `examples` (the way to satisfy a `pattern`), objects with their required properties (and those with
/// defaults), strings within length bounds, numbers within bounds,
/// booleans, arrays of `minItems` (at least one) items, nested objects and
/// local `$ref`s.
pub fn args_from_schema(schema: &Value) -> Result<Value, ArgsError> {
    let v = generate(schema, schema, 0);
    check(schema, &v)?;
    Ok(v)
}

/// The config a daemon would send this plugin with its first
/// `config.update`: a valid value for `config_schema` and one for
/// `system_config_schema` (defaults, required fields filled), merged, the
/// project side's where both name a field (plugin-host.md § Merging;
/// ADDENDUM §16). `{}` without schemas.
///
/// ```
/// use kaged_conformance::daemon_config;
/// use kaged_plugin_protocol::manifest::Manifest;
/// let m = Manifest::from_yaml_str(concat!(
///     "name: x\nversion: 0.1.0\nkaged_api: 1\ndescription: d\ncommand: [./x]\ncapabilities: []\n",
///     "config_schema: {type: object, properties: {greeting: {type: string, default: hi}}}\n",
///     "system_config_schema: {type: object, required: [api_token], properties: {api_token: {type: string}}}\n",
/// )).unwrap();
/// assert_eq!(serde_json::Value::Object(daemon_config(&m).unwrap()),
///            serde_json::json!({"greeting": "hi", "api_token": "conformance"}));
/// ```
pub fn daemon_config(
    manifest: &kaged_plugin_protocol::manifest::Manifest,
) -> Result<Map<String, Value>, ArgsError> {
    let mut out = Map::new();
    for schema in [&manifest.config_schema, &manifest.system_config_schema]
        .into_iter()
        .flatten()
    {
        if let Value::Object(side) = args_from_schema(schema)? {
            for (k, v) in side {
                out.entry(k).or_insert(v);
            }
        }
    }
    Ok(out)
}

/// What a run sends every session first, as the daemon would: the
/// [`daemon_config`] when it holds more than the schemas' defaults, else
/// the defaults (the same config; a replay script then needs no
/// `config:`), and the defaults when none could be generated.
pub fn daemon_first_config(
    manifest: &kaged_plugin_protocol::manifest::Manifest,
) -> kaged_host_core::FirstConfig {
    use kaged_host_core::FirstConfig;
    match daemon_config(manifest) {
        Ok(c) if c != manifest.config_defaults() => FirstConfig::Given(c),
        _ => FirstConfig::Defaults,
    }
}

/// Arguments breaking `schema` (an object schema): a required property
/// left out, or a property of the wrong type, or an unexpected property
/// when `additionalProperties` is false. They start from valid arguments;
/// when the generator cannot make those (a `pattern` without `examples`),
/// from its best effort, taking only a try whose every error is about the
/// field it breaks (so that the plugin's error names that field). `None`
/// when nothing tried breaks it.
pub fn args_breaking_schema(schema: &Value) -> Option<InvalidArgs> {
    let validator = jsonschema::validator_for(schema).ok()?;
    match args_from_schema(schema) {
        Ok(base) => tries(schema, &base)
            .into_iter()
            .find(|t| !validator.is_valid(&t.args)),
        Err(_) => {
            let base = generate(schema, schema, 0);
            tries(schema, &base)
                .into_iter()
                .find(|t| breaks_only(&validator, &t.args, &t.field))
        }
    }
}

/// Whether `args` break the schema, and only at `field`: every error is
/// at `/field` (or under it), or at the root naming it (`"field" is a
/// required property`, `'field' was unexpected`).
fn breaks_only(validator: &jsonschema::Validator, args: &Value, field: &str) -> bool {
    let at = format!("/{field}");
    let named = [format!("\"{field}\""), format!("'{field}'")];
    let mut errors = validator.iter_errors(args).peekable();
    errors.peek().is_some()
        && errors.all(|e| {
            let path = e.instance_path().as_str();
            path == at
                || path.starts_with(&format!("{at}/"))
                || (path.is_empty() && named.iter().any(|n| e.to_string().contains(n.as_str())))
        })
}

/// Whether `schema` (an object schema) has nothing to break: no required
/// property, no typed property, extra properties allowed. Then no
/// arguments break it, and `methods.tool_invalid_args` does not apply.
pub fn accepts_every_object(schema: &Value) -> bool {
    tries(schema, &json!({})).is_empty()
}

/// The ways to break `schema` tried, each from `base`.
fn tries(schema: &Value, base: &Value) -> Vec<InvalidArgs> {
    let root = resolve(schema, schema);
    let mut tries: Vec<InvalidArgs> = Vec::new();
    if let Some(req) = root.get("required").and_then(Value::as_array) {
        for name in req.iter().filter_map(Value::as_str) {
            let mut args = base.clone();
            if let Some(o) = args.as_object_mut() {
                o.remove(name);
            }
            tries.push(InvalidArgs {
                args,
                field: name.to_string(),
                how: "required property left out".into(),
            });
        }
    }
    if let Some(props) = root.get("properties").and_then(Value::as_object) {
        for (name, p) in props {
            let p = resolve(schema, p);
            if let Some(wrong) = wrong_type(p) {
                let mut args = base.clone();
                if let Some(o) = args.as_object_mut() {
                    o.insert(name.clone(), wrong.clone());
                }
                tries.push(InvalidArgs {
                    args,
                    field: name.clone(),
                    how: format!("wrong type: {wrong}"),
                });
            }
        }
    }
    if root.get("additionalProperties") == Some(&Value::Bool(false)) {
        let mut args = base.clone();
        if let Some(o) = args.as_object_mut() {
            o.insert("conformance_unexpected".into(), json!(1));
        }
        tries.push(InvalidArgs {
            args,
            field: "conformance_unexpected".into(),
            how: "unexpected property".into(),
        });
    }
    tries
}

fn check(schema: &Value, v: &Value) -> Result<(), ArgsError> {
    let validator =
        jsonschema::validator_for(schema).map_err(|e| ArgsError::BadSchema(e.to_string()))?;
    let first = validator.iter_errors(v).next().map(|e| e.to_string());
    match first {
        None => Ok(()),
        Some(reason) => Err(ArgsError::Unsatisfied {
            value: v.to_string(),
            reason,
        }),
    }
}

fn wrong_type(p: &Value) -> Option<Value> {
    let t = first_type(p)?;
    Some(match t.as_str() {
        "string" => json!(12345),
        "integer" | "number" => json!("not a number"),
        "boolean" => json!("not a boolean"),
        "array" => json!("not an array"),
        "object" => json!("not an object"),
        _ => return None,
    })
}

fn first_type(s: &Value) -> Option<String> {
    match s.get("type") {
        Some(Value::String(t)) => Some(t.clone()),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .map(str::to_string),
        _ if s.get("properties").is_some() => Some("object".into()),
        _ => None,
    }
}

/// Follow a local `$ref` (`#/$defs/X`, `#/definitions/X`).
fn resolve<'a>(root: &'a Value, s: &'a Value) -> &'a Value {
    let mut cur = s;
    for _ in 0..16 {
        match cur
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
        {
            Some(ptr) => match root.pointer(ptr) {
                Some(t) => cur = t,
                None => return cur,
            },
            None => return cur,
        }
    }
    cur
}

fn generate(root: &Value, s: &Value, depth: usize) -> Value {
    let s = resolve(root, s);
    if depth > 16 {
        return Value::Null;
    }
    if let Some(d) = s.get("default") {
        return d.clone();
    }
    if let Some(c) = s.get("const") {
        return c.clone();
    }
    if let Some(e) = s
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return e.clone();
    }
    if let Some(e) = s
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return e.clone();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = s.get(key).and_then(Value::as_array).and_then(|a| a.first()) {
            if s.get("type").is_none() && s.get("properties").is_none() {
                return generate(root, first, depth + 1);
            }
        }
    }
    match first_type(s).as_deref() {
        Some("object") => {
            let mut o = Map::new();
            let required: Vec<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (name, p) in props {
                    if required.contains(&name.as_str())
                        || resolve(root, p).get("default").is_some()
                    {
                        o.insert(name.clone(), generate(root, p, depth + 1));
                    }
                }
            }
            Value::Object(o)
        }
        Some("string") => json!(string(s)),
        Some("integer") => json!(number(s, true) as i64),
        Some("number") => json!(number(s, false)),
        Some("boolean") => json!(true),
        Some("array") => {
            let min = s
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .max(1);
            let max = s
                .get("maxItems")
                .and_then(Value::as_u64)
                .unwrap_or(u64::MAX);
            let n = min.min(max);
            let item = s
                .get("items")
                .map_or(json!("conformance"), |i| generate(root, i, depth + 1));
            Value::Array((0..n).map(|_| item.clone()).collect())
        }
        Some("null") => Value::Null,
        _ => json!({}),
    }
}

fn string(s: &Value) -> String {
    let base = match s.get("format").and_then(Value::as_str) {
        Some("email") => "conformance@example.com",
        Some("uri") | Some("url") => "https://example.com/conformance",
        Some("date-time") => "2024-01-01T00:00:00Z",
        Some("date") => "2024-01-01",
        Some("uuid") => "123e4567-e89b-12d3-a456-426614174000",
        _ => "conformance",
    };
    let mut out = base.to_string();
    let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    while out.chars().count() < min {
        out.push('x');
    }
    if let Some(max) = s.get("maxLength").and_then(Value::as_u64) {
        out = out.chars().take(max as usize).collect();
    }
    out
}

fn number(s: &Value, integer: bool) -> f64 {
    let get = |k: &str| s.get(k).and_then(Value::as_f64);
    // Inclusive bounds; an exclusive bound moves in by one for integers.
    let lo =
        get("minimum")
            .or(get("exclusiveMinimum").map(|v| if integer { v.floor() + 1.0 } else { v }));
    let hi =
        get("maximum")
            .or(get("exclusiveMaximum").map(|v| if integer { v.ceil() - 1.0 } else { v }));
    let excl_lo = get("minimum").is_none() && get("exclusiveMinimum").is_some();
    let excl_hi = get("maximum").is_none() && get("exclusiveMaximum").is_some();
    match (lo, hi) {
        (Some(l), Some(h)) if integer => l.ceil().min(h),
        (Some(l), Some(h)) => (l + h) / 2.0,
        (Some(l), None) if excl_lo && !integer => l + 1.0,
        (Some(l), None) if integer => l.ceil(),
        (Some(l), None) => l,
        (None, Some(h)) if h >= 1.0 && !(excl_hi && h == 1.0) => 1.0,
        (None, Some(h)) if excl_hi && !integer => h - 1.0,
        (None, Some(h)) => h,
        (None, None) => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_refs_enums_arrays() {
        let schema = json!({
            "type": "object",
            "required": ["mode", "inner", "tags", "flag", "ratio"],
            "properties": {
                "mode": {"enum": ["fast", "slow"]},
                "inner": {"$ref": "#/$defs/Inner"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                "flag": {"type": "boolean"},
                "ratio": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 0.5}
            },
            "$defs": {"Inner": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer", "minimum": 3}}}}
        });
        let v = args_from_schema(&schema).unwrap();
        assert_eq!(v["mode"], "fast");
        assert_eq!(v["inner"], json!({"n": 3}));
        assert_eq!(v["tags"], json!(["conformance", "conformance"]));
        let bad = args_breaking_schema(&schema).unwrap();
        assert_eq!(bad.field, "mode");
        assert!(bad.args.get("mode").is_none());
    }

    #[test]
    fn unbreakable_and_unsatisfiable_schemas() {
        assert!(args_breaking_schema(&json!({"type": "object"})).is_none());
        let closed =
            args_breaking_schema(&json!({"type": "object", "additionalProperties": false}))
                .unwrap();
        assert_eq!(closed.field, "conformance_unexpected");
        let pattern = json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string", "pattern": "^[0-9]+$"}}});
        assert!(matches!(
            args_from_schema(&pattern),
            Err(ArgsError::Unsatisfied { .. })
        ));
        let example = json!({"type": "object", "required": ["a"],
            "properties": {"a": {"type": "string", "pattern": "^[0-9]+$", "examples": ["20261122"]}}});
        assert_eq!(args_from_schema(&example), Ok(json!({"a": "20261122"})));
        assert!(accepts_every_object(&json!({"type": "object"})));
        assert!(!accepts_every_object(&pattern));
    }

    /// A schema the generator cannot satisfy is still broken for a reason
    /// the plugin must name: only a try whose every error is about its
    /// own field is taken.
    #[test]
    fn arguments_breaking_a_schema_without_valid_ones() {
        let schema = json!({"type": "object", "required": ["url"], "additionalProperties": false,
            "properties": {"url": {"type": "string", "pattern": "^https?://"},
                           "note": {"type": "string"}}});
        assert!(args_from_schema(&schema).is_err());
        let bad = args_breaking_schema(&schema).expect("a try");
        assert_eq!(bad.field, "url");
        assert_eq!(bad.how, "required property left out");
        assert!(bad.args.get("url").is_none(), "{}", bad.args);
        // Two unsatisfiable fields: no try breaks only one of them.
        let two = json!({"type": "object", "required": ["a", "b"],
            "properties": {"a": {"type": "string", "pattern": "^x$"}, "b": {"type": "string", "pattern": "^y$"}}});
        assert!(args_breaking_schema(&two).is_none());
    }
}
