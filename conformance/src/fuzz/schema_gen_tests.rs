//! The generated values reach their schema's length edges, and stay
//! inside its bounds.

use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{json, Value};

use super::*;

/// `n` values of `strategy` from a fixed seed.
fn sample(strategy: BoxedStrategy<Value>, n: usize) -> Vec<Value> {
    let mut runner = TestRunner::deterministic();
    (0..n)
        .map(|_| strategy.new_tree(&mut runner).expect("a value").current())
        .collect()
}

fn len(v: &Value) -> usize {
    match v {
        Value::String(s) => s.chars().count(),
        Value::Array(a) => a.len(),
        _ => usize::MAX,
    }
}

/// How many of `values` have `member` of length `n`.
fn at(values: &[Value], member: &str, n: usize) -> usize {
    values.iter().filter(|v| len(&v[member]) == n).count()
}

#[test]
fn lengths_reach_min_and_max_length_and_items_about_one_time_in_six() {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 3, "maxLength": 40},
            "tags": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 9},
            "values": {"type": "array", "items": {"type": "integer"}, "maxItems": 50},
        },
        "required": ["name", "tags", "values"],
    });
    let values = sample(valid(&schema, 0), 600);
    for (member, lo, hi) in [("name", 3, 40), ("tags", 2, 9), ("values", 0, 50)] {
        let (at_lo, at_hi) = (at(&values, member, lo), at(&values, member, hi));
        // One time in six is 100 of 600; a fixed seed, so no flake.
        assert!(
            at_lo >= 70 && at_hi >= 70,
            "{member}: {at_lo} at {lo}, {at_hi} at {hi} of 600"
        );
        assert!(
            values.iter().all(|v| (lo..=hi).contains(&len(&v[member]))),
            "{member} within its bounds"
        );
    }
    // The empty-array bug of the fixture (`maxItems: 50`, no minItems):
    // uniform lengths would hit it once in 51 calls.
    assert!(at(&values, "values", 0) * 51 > 600 * 3);
}

#[test]
fn without_bounds_the_edges_are_empty_and_long() {
    let schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string"}, "list": {"type": "array"}},
        "required": ["text", "list"],
    });
    let values = sample(valid(&schema, 0), 300);
    assert!(at(&values, "text", 0) > 0 && at(&values, "text", LONG_STRING) > 0);
    assert!(at(&values, "list", 0) > 0 && at(&values, "list", LONG_ARRAY) > 0);
}

#[test]
fn a_huge_bound_is_capped() {
    let schema = json!({"type": "string", "maxLength": 10_000_000});
    assert!(sample(valid(&schema, 0), 60)
        .iter()
        .all(|v| len(v) <= MAX_STRING));
    let nested = json!({"type": "array", "minItems": 5000, "items": {"type": "null"}});
    assert!(sample(valid(&nested, 0), 10)
        .iter()
        .all(|v| len(v) == MAX_ARRAY));
}

proptest! {
    /// Every generated value the validator judges: within bounds, always.
    #[test]
    fn strings_and_arrays_stay_within_their_bounds(
        lo in 0usize..20, span in 0usize..30, items_lo in 0usize..5, items_span in 0usize..8,
    ) {
        let schema = json!({
            "type": "array",
            "minItems": items_lo, "maxItems": items_lo + items_span,
            "items": {"type": "string", "minLength": lo, "maxLength": lo + span},
        });
        let judge = jsonschema::validator_for(&schema).expect("compiles");
        for v in sample(valid(&schema, 0), 20) {
            prop_assert!(judge.is_valid(&v), "{} for {}", v, schema);
        }
    }
}
