//! Knob writes as the daemon sends them: a `config.update` whose config
//! sets the field a knob binds to, to a value at or past the knob's bounds
//! (the ends of a range, an enum value or one it does not list, a text at
//! or past `max_length`, a path with or without an allowed prefix).

use kaged_plugin_protocol::manifest::Manifest;
use proptest::prelude::*;
use serde_json::{json, Value};

fn f64_of(fields: &serde_json::Map<String, Value>, k: &str) -> Option<f64> {
    fields.get(k).and_then(Value::as_f64)
}

/// Values for a knob of `kind` with `fields`, in and past its bounds.
fn values(kind: &str, fields: &serde_json::Map<String, Value>) -> BoxedStrategy<Value> {
    match kind {
        "range" | "int_range" => {
            let lo = f64_of(fields, "min").unwrap_or(0.0);
            let hi = f64_of(fields, "max").unwrap_or(100.0).max(lo);
            let step = if kind == "int_range" {
                1.0
            } else {
                f64_of(fields, "step").unwrap_or(0.1)
            };
            let integer = kind == "int_range";
            let as_value = move |v: f64| {
                if integer {
                    json!(v.round() as i64)
                } else {
                    json!(v)
                }
            };
            proptest::sample::select(vec![lo, hi, (lo + hi) / 2.0, lo - step, hi + step])
                .prop_map(as_value)
                .boxed()
        }
        "enum" => {
            let mut vs: Vec<Value> = fields
                .get("values")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            vs.push(json!("kaged_fuzz_not_listed"));
            proptest::sample::select(vs).boxed()
        }
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "text" | "multiline" | "model_alias" => {
            let max = fields
                .get("max_length")
                .and_then(Value::as_u64)
                .unwrap_or(64) as usize;
            proptest::sample::select(vec![0, 1, max, max + 1])
                .prop_map(|n| Value::String("k".repeat(n)))
                .boxed()
        }
        "path" => {
            let mut vs: Vec<Value> = fields
                .get("prefixes")
                .and_then(Value::as_array)
                .map(|ps| {
                    ps.iter()
                        .filter_map(Value::as_str)
                        .map(|p| json!(format!("{p}/fuzz")))
                        .collect()
                })
                .unwrap_or_default();
            vs.push(json!("relative/fuzz"));
            proptest::sample::select(vs).boxed()
        }
        _ => Just(Value::Null).boxed(),
    }
}

/// A knob write of `manifest`: (the config sent, the knob's name), or
/// `None` when it declares no knob bound to a config field.
pub fn knob_writes(manifest: &Manifest) -> Option<BoxedStrategy<(Value, String)>> {
    let arms: Vec<BoxedStrategy<(Value, String)>> = manifest
        .knobs
        .iter()
        .filter_map(|(name, knob)| {
            let field = knob
                .binds_to
                .as_deref()?
                .strip_prefix("config.")?
                .to_string();
            let name = name.clone();
            Some(
                values(&knob.kind, &knob.fields)
                    .prop_map(move |v| (json!({ field.clone(): v }), name.clone()))
                    .boxed(),
            )
        })
        .collect();
    (!arms.is_empty()).then(|| proptest::strategy::Union::new(arms).boxed())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;

    #[test]
    fn knob_writes_reach_and_pass_each_bound() {
        let manifest = Manifest::from_yaml_str(
            "name: k\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [./k]\ncapabilities: []\n\
             config_schema: {type: object, properties: {n: {type: integer}, mode: {type: string}}}\n\
             knobs:\n  n: {type: int_range, label: N, min: 1, max: 20, step: 1, default: 3, binds_to: config.n}\n\
             \x20 mode: {type: enum, label: M, values: [a, b], default: a, binds_to: config.mode}\n",
        )
        .expect("a manifest");
        let writes = knob_writes(&manifest).expect("knobs");
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..400 {
            let (config, knob) = writes.new_tree(&mut runner).expect("a value").current();
            seen.insert(format!(
                "{knob}={}",
                config
                    .as_object()
                    .and_then(|o| o.values().next())
                    .cloned()
                    .unwrap_or_default()
            ));
        }
        for want in [
            "n=0",
            "n=1",
            "n=20",
            "n=21",
            "mode=\"a\"",
            "mode=\"kaged_fuzz_not_listed\"",
        ] {
            assert!(seen.contains(want), "{want} in {seen:?}");
        }
    }
}
