//! The search without a plugin: predicates stand for the planted bugs.

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::{HookName, PluginCallContext};
use serde_json::{json, Value};

use super::*;

fn judges() -> Judges {
    Judges::of(
        &Manifest::from_yaml_str(
            "name: p\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [./p]\ncapabilities: []\n\
             roles: [compactor]\nhooks: [pre_compact]\n\
             tools:\n  - name: tag\n    description: t\n    parameters_schema:\n      type: object\n\
             \x20     properties:\n        note: {type: string, maxLength: 200}\n\
             \x20       tags: {type: array, items: {type: string, maxLength: 20}, maxItems: 10}\n\
             \x20       urgent: {type: boolean}\n\
             \x20       count: {type: number}\n\
             \x20     required: [note, tags]\n      additionalProperties: false\n",
        )
        .expect("a manifest"),
    )
}

fn ctx() -> PluginCallContext {
    PluginCallContext::agent("fuzz-project", "primary", "ses_fuzz_1", "req_fuzz_1")
}

fn tag(note: &str, tags: &[&str], valid: bool) -> Op {
    Op::Tool {
        method: "p.tag".into(),
        args: json!({"note": note, "tags": tags, "urgent": true}),
        valid,
        ctx: ctx(),
    }
}

/// The search run to its end against `fails`; the result and the runs.
fn reduce(ops: Vec<Op>, fails: impl Fn(&[Op]) -> bool) -> (Vec<Op>, usize) {
    let judges = judges();
    assert!(fails(&ops), "the start fails");
    let mut r = Reducer::new(ops, &judges);
    let mut runs = 0;
    while let Some(candidate) = r.next() {
        runs += 1;
        assert!(runs < 10_000, "the search ends");
        r.verdict(fails(&candidate));
    }
    assert!(fails(r.best()), "the result still fails");
    (r.into_best(), runs)
}

/// Every tool call of `ops`, batches included.
fn tools(ops: &[Op]) -> Vec<&Value> {
    ops.iter()
        .flat_map(|op| match op {
            Op::Together(m) => m.iter().collect(),
            op => vec![op],
        })
        .filter_map(|op| match op {
            Op::Tool { args, .. } => Some(args),
            _ => None,
        })
        .collect()
}

fn tag_count(args: &Value) -> usize {
    args["tags"].as_array().map_or(0, Vec::len)
}

#[test]
fn a_batch_shrinks_to_the_one_call_and_its_array_to_the_fewest_items() {
    let seven = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta"];
    let ops = vec![
        Op::Ping,
        Op::Together(vec![
            Op::Ping,
            tag("a long note", &seven, true),
            Op::Config {
                config: json!({}),
                valid: true,
            },
        ]),
        tag("x", &["one"], true),
    ];
    let three_or_more = |ops: &[Op]| tools(ops).iter().any(|a| tag_count(a) >= 3);
    let (best, _) = reduce(ops, three_or_more);
    assert_eq!(best.len(), 1, "{best:?}");
    let Op::Tool { args, valid, .. } = &best[0] else {
        panic!("one tool call: {best:?}")
    };
    assert!(*valid);
    // Required members stay (dropping one would make it invalid); the
    // optional one goes; every string is as short as it gets.
    assert_eq!(args, &json!({"note": "", "tags": ["", "", ""]}));
}

#[test]
fn a_string_shrinks_to_the_shortest_prefix_that_still_fails() {
    let ops = vec![tag("a note with an x in it", &[], true)];
    let has_x = |ops: &[Op]| {
        tools(ops)
            .iter()
            .any(|a| a["note"].as_str().is_some_and(|n| n.contains('x')))
    };
    let (best, _) = reduce(ops, has_x);
    assert_eq!(tools(&best)[0]["note"], "a note with an x");
}

#[test]
fn a_broken_call_stays_broken_and_a_valid_one_valid_while_they_shrink() {
    // The replay expects -32602 of a broken call and an answer of a valid
    // one: neither may cross its schema while it shrinks.
    let more_than_five = |ops: &[Op]| tools(ops).iter().any(|a| tag_count(a) > 5);
    for (start, valid) in [(11, false), (8, true)] {
        let tags = vec!["t"; start];
        let (best, _) = reduce(vec![tag("n", &tags, valid)], more_than_five);
        let Op::Tool { args, valid: v, .. } = &best[0] else {
            panic!("one tool call: {best:?}")
        };
        assert_eq!(*v, valid);
        let judged = judges().tool("p.tag").map(|j| j.valid(args));
        assert_eq!(judged, Some(valid), "{args}");
        if valid {
            // `note` is required: it stays, as short as it gets.
            assert_eq!(args, &json!({"note": "", "tags": ["", "", "", "", "", ""]}));
        }
    }
}

fn messages(prefix: &str, n: usize) -> Value {
    (0..n)
        .map(|i| {
            json!({"id": format!("{prefix}_{i:03}"), "role": "user",
                   "content": "some words here", "always_keep": i % 4 == 0})
        })
        .collect()
}

#[test]
fn message_lists_shrink_to_the_fewest_messages_and_empty_contents() {
    let ops = vec![Op::Hook {
        hook: HookName::PreCompact,
        params: json!({
            "role": "compactor", "strategy": "summarize", "trigger": "threshold_crossed",
            "messages_being_compacted": messages("old", 27),
            "messages_remaining": messages("new", 18),
        }),
        ctx: ctx(),
    }];
    let count = |p: &Value, k: &str| p[k].as_array().map_or(0, Vec::len);
    // The compactor fixture's bug: past 20 messages, an always-keep one
    // is lost.
    let past_20_with_a_keeper = |ops: &[Op]| {
        ops.iter().any(|op| match op {
            Op::Hook { params, .. } => {
                let all = ["messages_being_compacted", "messages_remaining"];
                let keeper = all.iter().any(|k| {
                    params[k]
                        .as_array()
                        .is_some_and(|ms| ms.iter().any(|m| m["always_keep"] == true))
                });
                all.iter().map(|k| count(params, k)).sum::<usize>() > 20 && keeper
            }
            _ => false,
        })
    };
    let (best, _) = reduce(ops, past_20_with_a_keeper);
    let Op::Hook { params, .. } = &best[0] else {
        panic!("{best:?}")
    };
    let total = count(params, "messages_being_compacted") + count(params, "messages_remaining");
    assert_eq!(total, 21, "{params}");
    // The hook's own strings and the message ids are not cut; contents are.
    assert_eq!(params["role"], "compactor");
    let ids: std::collections::BTreeSet<&str> = ["messages_being_compacted", "messages_remaining"]
        .iter()
        .flat_map(|k| params[k].as_array().into_iter().flatten())
        .filter_map(|m| {
            assert_eq!(m["content"], "", "{m}");
            m["id"].as_str()
        })
        .collect();
    assert_eq!(ids.len(), 21, "ids stay distinct: {ids:?}");
}

#[test]
fn shorter_lengths_go_from_nothing_to_one_less() {
    assert_eq!(shorter(0), Vec::<usize>::new());
    assert_eq!(shorter(1), vec![0]);
    assert_eq!(shorter(7), vec![0, 3, 5, 6]);
    assert_eq!(shorter(1200).first(), Some(&0));
    assert_eq!(shorter(1200).last(), Some(&1199));
    assert!(shorter(1200).len() < 16);
}

#[test]
fn a_number_shrinks_toward_zero_to_the_smallest_that_still_fails() {
    // A planted bug at "more than 12": 913 shrinks to 13, -40 (a bug at
    // "less than -7") to -8, and 2.75 (a bug at anything non-zero) to 1.
    let number = |n: Value| Op::Tool {
        method: "p.tag".into(),
        args: json!({"note": "", "tags": [], "count": n}),
        valid: true,
        ctx: ctx(),
    };
    let count = |ops: &[Op]| tools(ops).first().map(|a| a["count"].clone());
    let above = |ops: &[Op]| count(ops).and_then(|c| c.as_i64()).is_some_and(|c| c > 12);
    let (ops, _) = reduce(vec![number(json!(913))], above);
    assert_eq!(count(&ops), Some(json!(13)));
    let below = |ops: &[Op]| count(ops).and_then(|c| c.as_i64()).is_some_and(|c| c < -7);
    let (ops, _) = reduce(vec![number(json!(-40))], below);
    assert_eq!(count(&ops), Some(json!(-8)));
    let nonzero = |ops: &[Op]| {
        count(ops)
            .and_then(|c| c.as_f64())
            .is_some_and(|c| c != 0.0)
    };
    let (ops, _) = reduce(vec![number(json!(2.75))], nonzero);
    assert_eq!(count(&ops), Some(json!(1)));
}
