//! Values from a JSON Schema, as proptest strategies (so a failure shrinks
//! to a small value): [`valid`] leans on the schema's own bounds, and
//! reaches its edges: each string and array is at its `minLength` /
//! `minItems` at least one time in six and at its `maxLength` /
//! `maxItems` at least one time in six (without a bound, the longest is
//! 1 200 characters and 25 items; never past 65 536 and 1 024); numbers
//! at `minimum` and `maximum` one time in three. [`mutated`] breaks one thing of such a value (a required
//! member dropped, a member of the wrong type, a number or a length past
//! its bound, an extra member). Which values are valid
//! is decided by the schema validator, never by how they were built.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// Strings without `maxLength` reach this length (past 1 000: a classic
/// plugin bug).
const LONG_STRING: usize = 1_200;
/// Arrays without `maxItems` reach this length (past 20: another).
const LONG_ARRAY: usize = 25;
/// The longest string generated, whatever `maxLength` allows.
const MAX_STRING: usize = 65_536;
/// The longest array generated, whatever `maxItems` allows.
const MAX_ARRAY: usize = 1_024;

fn num(schema: &Value, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64)
}

fn size(schema: &Value, key: &str) -> Option<usize> {
    schema.get(key).and_then(Value::as_u64).map(|n| n as usize)
}

/// The shortest and the longest length `schema` allows by its `min` and
/// `max` keywords (`default_max` when it gives none, at most `cap`).
fn lengths(schema: &Value, min: &str, max: &str, default_max: usize, cap: usize) -> (usize, usize) {
    let lo = size(schema, min).unwrap_or(0).min(cap);
    let hi = size(schema, max).unwrap_or(default_max).min(cap).max(lo);
    (lo, hi)
}

/// A small arbitrary JSON value (for schemas that say nothing).
fn any_json() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        "[a-z ]{0,12}".prop_map(Value::from),
    ]
    .boxed()
}

/// Values that (mostly) satisfy `schema`; see the module docs.
pub fn valid(schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    if depth > 4 {
        return Just(Value::Null).boxed();
    }
    if let Some(c) = schema.get("const") {
        return Just(c.clone()).boxed();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        if !values.is_empty() {
            return proptest::sample::select(values.clone()).boxed();
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            let arms: Vec<BoxedStrategy<Value>> =
                options.iter().map(|s| valid(s, depth + 1)).collect();
            if !arms.is_empty() {
                return proptest::strategy::Union::new(arms).boxed();
            }
        }
    }
    match schema.get("type") {
        Some(Value::String(t)) => of_type(t, schema, depth),
        Some(Value::Array(types)) => {
            let arms: Vec<BoxedStrategy<Value>> = types
                .iter()
                .filter_map(Value::as_str)
                .map(|t| of_type(t, schema, depth))
                .collect();
            if arms.is_empty() {
                any_json()
            } else {
                proptest::strategy::Union::new(arms).boxed()
            }
        }
        _ if schema.get("properties").is_some() => of_type("object", schema, depth),
        _ => any_json(),
    }
}

fn of_type(t: &str, schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    match t {
        "null" => Just(Value::Null).boxed(),
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "integer" => {
            let lo = num(schema, "minimum").map_or(-1_000_000, |v| v.ceil() as i64);
            let hi = num(schema, "maximum").map_or(1_000_000, |v| v.floor() as i64);
            let (lo, hi) = (lo.min(hi), hi.max(lo));
            prop_oneof![Just(lo), Just(hi), lo..=hi]
                .prop_map(Value::from)
                .boxed()
        }
        "number" => {
            let lo = num(schema, "minimum").unwrap_or(-1.0e6);
            let hi = num(schema, "maximum").unwrap_or(1.0e6);
            let (lo, hi) = (lo.min(hi), hi.max(lo));
            prop_oneof![Just(lo), Just(hi), lo..=hi]
                .prop_map(|v| json!(v))
                .boxed()
        }
        "string" => {
            let (lo, hi) = lengths(schema, "minLength", "maxLength", LONG_STRING, MAX_STRING);
            let chars = |n: std::ops::RangeInclusive<usize>| {
                proptest::collection::vec(proptest::char::range('a', 'z'), n)
                    .prop_map(|cs| Value::String(cs.into_iter().collect()))
            };
            // The edges (the shortest and the longest allowed), mostly
            // short, sometimes any length (a length shrinks by dropping
            // characters, toward the first arm).
            prop_oneof![
                1 => chars(lo..=lo),
                1 => chars(hi..=hi),
                3 => chars(lo..=hi.min(lo + 16)),
                1 => chars(lo..=hi),
            ]
            .boxed()
        }
        "array" => {
            let items = schema.get("items").cloned().unwrap_or(json!({}));
            let (lo, hi) = lengths(schema, "minItems", "maxItems", LONG_ARRAY, MAX_ARRAY);
            let of = |n: std::ops::RangeInclusive<usize>| {
                proptest::collection::vec(valid(&items, depth + 1), n).prop_map(Value::Array)
            };
            prop_oneof![
                1 => of(lo..=lo),
                1 => of(hi..=hi),
                2 => of(lo..=hi.min(lo + 4)),
                2 => of(lo..=hi),
            ]
            .boxed()
        }
        "object" => object(schema, depth),
        _ => any_json(),
    }
}

fn object(schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let members: Vec<BoxedStrategy<Option<(String, Value)>>> = props
        .into_iter()
        .map(|(name, s)| {
            let value = valid(&s, depth + 1);
            if required.contains(&name) {
                value.prop_map(move |v| Some((name.clone(), v))).boxed()
            } else {
                proptest::option::of(value.prop_map(move |v| (name.clone(), v))).boxed()
            }
        })
        .collect();
    members
        .prop_map(|kv| Value::Object(kv.into_iter().flatten().collect::<Map<_, _>>()))
        .boxed()
}

/// One thing of a valid value broken; see the module docs.
pub fn mutated(schema: &Value) -> BoxedStrategy<Value> {
    let schema = schema.clone();
    (valid(&schema, 0), any::<u32>())
        .prop_map(move |(v, pick)| mutate(&schema, v, pick))
        .boxed()
}

fn mutate(schema: &Value, value: Value, pick: u32) -> Value {
    // Tool arguments and configs are objects on the wire (they carry
    // `_context`): the root stays one, its members break.
    let Value::Object(mut obj) = value else {
        return json!({"kaged_fuzz_unexpected": true});
    };
    let props = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let names: Vec<String> = props
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    match pick % 5 {
        0 if !required.is_empty() => {
            obj.remove(required[pick as usize / 5 % required.len()]);
        }
        1 | 2 if !names.is_empty() => {
            let name = &names[pick as usize / 5 % names.len()];
            let s = props
                .and_then(|p| p.get(name))
                .cloned()
                .unwrap_or(json!({}));
            obj.insert(name.clone(), past_bound(&s, pick));
        }
        _ => {
            obj.insert("kaged_fuzz_unexpected".into(), json!(true));
        }
    }
    Value::Object(obj)
}

/// A value just past `schema`'s bound, or of another type.
fn past_bound(schema: &Value, pick: u32) -> Value {
    let t = schema.get("type").and_then(Value::as_str).unwrap_or("");
    match (t, pick % 2) {
        ("integer" | "number", 0) => match (num(schema, "maximum"), num(schema, "minimum")) {
            (Some(hi), _) => json!(hi + 1.0),
            (None, Some(lo)) => json!(lo - 1.0),
            _ => json!("not a number"),
        },
        ("string", 0) => match size(schema, "maxLength") {
            Some(n) => Value::String("x".repeat(n + 1)),
            None => json!(12345),
        },
        ("array", 0) => match size(schema, "maxItems") {
            Some(n) => Value::Array(vec![Value::Null; n + 1]),
            None => json!("not an array"),
        },
        ("string", _) => json!(12345),
        _ => json!("wrong type"),
    }
}

#[cfg(test)]
#[path = "schema_gen_tests.rs"]
mod tests;
