//! Property: for any message lists (ids repeated, always-keep anywhere,
//! any config), the compactor's answer passes `validate_compactor_result`,
//! its summary respects `max_summary_chars`, and no message is lost.

use std::collections::HashSet;

use kaged_example_summarizing_compactor::config::Config;
use kaged_example_summarizing_compactor::summary::compact;
use kaged_plugin_sdk::protocol::{
    validate_compactor_result, CompactParams, Message, MessageRole, PluginCallContext, PluginRole,
};
use proptest::prelude::*;

fn message() -> impl Strategy<Value = Message> {
    let role = prop_oneof![
        Just(MessageRole::System),
        Just(MessageRole::User),
        Just(MessageRole::Assistant),
        Just(MessageRole::Tool)
    ];
    // A small id alphabet makes repeated ids (and "summary_r") likely.
    let id = prop_oneof![Just("summary_r".to_string()), "[a-e]{1}", "m[0-9]{1,2}"];
    (id, role, "\\PC{0,80}", any::<bool>()).prop_map(|(id, role, content, keep)| {
        let m = Message::new(id, role, content);
        if keep {
            m.keep()
        } else {
            m
        }
    })
}

fn params() -> impl Strategy<Value = CompactParams> {
    (
        prop::collection::vec(message(), 0..24),
        prop::collection::vec(message(), 0..8),
    )
        .prop_map(|(c, r)| CompactParams {
            context: PluginCallContext::agent("p", "primary", "s", "r"),
            role: PluginRole::Compactor,
            messages_being_compacted: c,
            messages_remaining: r,
            strategy: "summarize".into(),
            trigger: "threshold_crossed".into(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_answer_validates(p in params(), max in 200u32..3000, keep in 0u32..6) {
        let config = Config { max_summary_chars: max, keep_last_n: keep };
        let result = compact(&p, &config);
        let answer = serde_json::to_value(&result).expect("serializes");
        prop_assert!(validate_compactor_result(&p, &answer).is_ok(), "{:?}", validate_compactor_result(&p, &answer));
        let superseded: HashSet<&str> = result.superseded.iter().map(String::as_str).collect();
        let originals = p.messages_being_compacted.len() + p.messages_remaining.len();
        let summaries = usize::from(!result.superseded.is_empty());
        prop_assert_eq!(result.messages.len() + result.superseded.len(), originals + summaries);
        for m in p.messages_being_compacted.iter().chain(&p.messages_remaining) {
            let kept = result.messages.iter().any(|k| k == m);
            prop_assert!(kept || superseded.contains(m.id.as_str()), "{} vanished", m.id);
        }
        if summaries == 1 {
            let summary = result.messages.iter().find(|m| m.role == MessageRole::System && m.id.starts_with("summary_r")
                && !p.messages_being_compacted.iter().chain(&p.messages_remaining).any(|o| o.id == m.id));
            let summary = summary.expect("a fresh summary message");
            prop_assert!(summary.content.chars().count() <= max as usize);
        }
    }
}
