//! The compactor contract of ADDENDUM §5: validation, the drop fallback,
//! observer answers and the plan builder.

use kaged_plugin_sdk::protocol::*;
use proptest::prelude::*;
use serde_json::{json, Value};

fn params(compacted: Vec<Message>, remaining: Vec<Message>) -> CompactParams {
    CompactParams {
        context: PluginCallContext::agent("music", "primary", "ses_1", "req_1"),
        role: PluginRole::Compactor,
        messages_being_compacted: compacted,
        messages_remaining: remaining,
        strategy: "summarize".into(),
        trigger: "threshold_crossed".into(),
    }
}

fn m(id: &str) -> Message {
    Message::new(id, MessageRole::User, format!("text of {id}"))
}

fn sample() -> CompactParams {
    params(
        vec![m("a"), m("b").keep(), m("c")],
        vec![m("d"), m("e").keep()],
    )
}

fn msgs(ids: &[(&str, bool)]) -> Value {
    Value::Array(
        ids.iter()
            .map(|(id, keep)| {
                let mut v = json!({"id": id, "role": "user", "content": format!("text of {id}")});
                if *keep {
                    v["always_keep"] = json!(true);
                }
                v
            })
            .collect(),
    )
}

#[test]
fn a_valid_result_passes() {
    let answer = json!({"role": "compactor", "messages": msgs(&[("s", false), ("b", true), ("d", false), ("e", true)]),
                        "superseded": ["a", "c"], "summary": "a and c"});
    let r = validate_compactor_result(&sample(), &answer).unwrap();
    assert_eq!(r.summary.as_deref(), Some("a and c"));
}

#[test]
fn null_empty_and_observer_answers_are_invalid() {
    for answer in [
        Value::Null,
        json!({}),
        json!({"retain": ["x"]}),
        json!({"inject": "hi"}),
    ] {
        let e = validate_compactor_result(&sample(), &answer).unwrap_err();
        assert_eq!(e.reason(), "not_a_compactor_result", "{answer}");
    }
}

#[test]
fn each_rule_is_enforced() {
    let s = sample();
    let wrong_role = json!({"role": "observer", "messages": msgs(&[("b", true), ("e", true)]), "superseded": []});
    assert_eq!(
        validate_compactor_result(&s, &wrong_role).unwrap_err(),
        CompactorViolation::WrongRole
    );

    let malformed = json!({"role": "compactor", "messages": [{"id": 1}], "superseded": []});
    assert_eq!(
        validate_compactor_result(&s, &malformed)
            .unwrap_err()
            .reason(),
        "malformed_result"
    );
    let no_superseded = json!({"role": "compactor", "messages": msgs(&[("b", true), ("e", true)])});
    assert_eq!(
        validate_compactor_result(&s, &no_superseded)
            .unwrap_err()
            .reason(),
        "malformed_result"
    );

    let dropped_remaining_keep =
        json!({"role": "compactor", "messages": msgs(&[("b", true)]), "superseded": []});
    assert_eq!(
        validate_compactor_result(&s, &dropped_remaining_keep).unwrap_err(),
        CompactorViolation::DroppedAlwaysKeep("e".into())
    );

    let foreign = json!({"role": "compactor", "messages": msgs(&[("b", true), ("e", true)]), "superseded": ["d"]});
    assert_eq!(
        validate_compactor_result(&s, &foreign).unwrap_err(),
        CompactorViolation::SupersededNotCompacted("d".into())
    );

    let keep_superseded = json!({"role": "compactor", "messages": msgs(&[("b", true), ("e", true)]), "superseded": ["b"]});
    assert_eq!(
        validate_compactor_result(&s, &keep_superseded).unwrap_err(),
        CompactorViolation::SupersededAlwaysKeep("b".into())
    );
}

#[test]
fn drop_fallback_keeps_always_keep_then_remaining() {
    let out = drop_fallback(&sample());
    let ids: Vec<&str> = out.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["b", "d", "e"]);
    assert_eq!(out.superseded, ["a", "c"]);
}

#[test]
fn observer_and_session_start_answers() {
    assert_eq!(parse_observer_answer(&Value::Null), Ok(None));
    assert_eq!(parse_observer_answer(&json!({})), Ok(None));
    let r = parse_observer_answer(&json!({"retain": ["x"], "inject": "y"}))
        .unwrap()
        .unwrap();
    assert_eq!(
        (r.retain.unwrap(), r.inject.unwrap()),
        (vec!["x".to_string()], "y".to_string())
    );
    assert!(parse_observer_answer(&json!({"role": "compactor"}))
        .unwrap_err()
        .contains("role"));
    assert!(parse_observer_answer(&json!([1])).is_err());
    assert_eq!(
        parse_session_start_answer(&json!({"inject": "hello"})),
        Ok(Some("hello".into()))
    );
    assert_eq!(parse_session_start_answer(&json!({"inject": ""})), Ok(None));
    assert_eq!(parse_session_start_answer(&Value::Null), Ok(None));
    assert!(parse_session_start_answer(&json!("text")).is_err());
}

prop_compose! {
    fn arb_messages(prefix: &'static str)(flags in proptest::collection::vec(any::<bool>(), 0..8)) -> Vec<Message> {
        flags.iter().enumerate().map(|(i, keep)| {
            let msg = m(&format!("{prefix}{i}"));
            if *keep { msg.keep() } else { msg }
        }).collect()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn plans_always_validate(compacted in arb_messages("c"), remaining in arb_messages("r"),
                             pick in proptest::collection::vec(any::<bool>(), 8)) {
        let p = params(compacted.clone(), remaining);
        let ids: Vec<String> = compacted.iter().zip(&pick).filter(|(_, k)| **k).map(|(m, _)| m.id.clone()).collect();
        let result = CompactorPlan::new(&p).summarise(ids, "summary").build();
        let v = serde_json::to_value(&result).unwrap();
        prop_assert!(validate_compactor_result(&p, &v).is_ok(), "{v}");
    }

    #[test]
    fn drop_fallback_is_a_valid_compaction(compacted in arb_messages("c"), remaining in arb_messages("r")) {
        let p = params(compacted.clone(), remaining.clone());
        let out = drop_fallback(&p);
        let as_result = json!({"role": "compactor", "messages": out.messages, "superseded": out.superseded});
        prop_assert!(validate_compactor_result(&p, &as_result).is_ok());
        prop_assert_eq!(out.messages.len() + out.superseded.len(), compacted.len() + remaining.len());
    }
}
