//! Every way a designated compactor can fail falls back to drop with
//! exactly `compaction.failed` then `compaction.completed {strategy:
//! "drop", fallback: true}` (ADDENDUM §5). Real plugin processes
//! (`tests/fixtures/projects/firing-invalid.yaml`).

use crate::support::firing::{finish, hook_budget_secs, of, request, start, trail};
use kaged_host_core::normal::{normal_form, NormalOptions};
use kaged_host_core::AuditEvent;
use kaged_host_engine::CompactionOutcome;
use serde_json::json;

/// What the drop fallback of the test request (`support::firing::request`:
/// compacting `m1`, always-keep `k1`, `m2`; remaining `m3`) must give,
/// written out from ADDENDUM §5: the always-keep messages of
/// `messages_being_compacted` in their order (`k1`), then
/// `messages_remaining` (`m3`); every other compacted id is superseded.
fn expected_messages() -> serde_json::Value {
    json!([
        {"id": "k1", "role": "system", "content": "pinned rule", "always_keep": true},
        {"id": "m3", "role": "user", "content": "latest"},
    ])
}

/// The superseded ids of the drop fallback of the test request.
const EXPECTED_SUPERSEDED: [&str; 2] = ["m1", "m2"];

fn assert_fallback(out: &CompactionOutcome, plugin: &str, reason: &str) {
    let path = &out.agent_path;
    let messages = serde_json::to_value(&out.messages).expect("messages serialise");
    assert_eq!(messages, expected_messages(), "{path}");
    assert_eq!(out.superseded, EXPECTED_SUPERSEDED, "{path}");
    assert!(out.fallback, "{path}");
    assert_eq!(out.applied, "drop", "{path}");
    assert_eq!(out.compactor.as_deref(), Some(plugin), "{path}");
    let chain: Vec<_> = out
        .audit
        .iter()
        .filter(|r| r.event.as_str().starts_with("compaction."))
        .collect();
    assert_eq!(chain.len(), 2, "{path}: {chain:?}");
    assert_eq!(chain[0].event, AuditEvent::CompactionFailed, "{path}");
    assert_eq!(chain[0].get("plugin"), plugin, "{path}");
    assert_eq!(chain[0].get("agent_path"), path.as_str(), "{path}");
    assert_eq!(chain[0].get("reason"), reason, "{path}");
    assert_eq!(chain[1].event, AuditEvent::CompactionCompleted, "{path}");
    assert_eq!(chain[1].get("strategy"), "drop", "{path}");
    assert_eq!(chain[1].get("fallback"), true, "{path}");
}

fn sub(name: &str) -> String {
    format!("primary.subagents.{name}")
}

#[tokio::test]
async fn every_invalid_compactor_answer_falls_back_to_drop() {
    let (agents, _audit, _t) = start("firing-invalid.yaml").await;
    // The `reason` of `compaction.failed`, one per way an answer breaks
    // ADDENDUM §5's `CompactorResult` rules (or the call fails).
    let cases = [
        (
            "drops-keep",
            "hooks-drops-keep",
            "compactor_dropped_always_keep",
        ),
        (
            "bad-superseded",
            "hooks-bad-superseded",
            "superseded_not_compacted",
        ),
        (
            "null-answer",
            "hooks-null-compactor",
            "not_a_compactor_result",
        ),
        ("empty-object", "hooks-scripted", "not_a_compactor_result"),
        (
            "observer-shaped",
            "hooks-scripted",
            "not_a_compactor_result",
        ),
        ("wrong-role", "hooks-scripted", "wrong_role"),
        ("malformed", "hooks-scripted", "malformed_result"),
        (
            "superseded-keep",
            "hooks-scripted",
            "superseded_always_keep",
        ),
        ("error", "hooks-scripted", "error"),
    ];
    for (agent, plugin, reason) in cases {
        let out = agents
            .compact(&sub(agent), request("ses_1").strategy("summarize"))
            .await
            .expect("compact");
        assert_fallback(&out, plugin, reason);
        if agent == "error" {
            let failed = of(&out.audit, AuditEvent::HookFailed);
            assert_eq!(failed.len(), 1);
            assert_eq!(failed[0].get("error_message"), "compactor exploded");
        }
    }
    finish(agents).await;
}

#[tokio::test]
async fn a_timed_out_compactor_falls_back_and_compaction_continues() {
    let (agents, _audit, _t) = start("firing-invalid.yaml").await;
    let out = agents
        .compact(&sub("slow"), request("ses_1"))
        .await
        .expect("compact");
    assert_fallback(&out, "hooks-slow", "timeout");
    // pre_compact and post_compact both time out; the observer after the
    // compactor still gets both, and post_compact sees the fallback list.
    let timeouts = of(&out.audit, AuditEvent::HookTimeout);
    assert_eq!(timeouts.len(), 2);
    assert!(timeouts.iter().all(|r| r.plugin == "hooks-slow"));
    // `timeout_sec` is the effective budget: hook_timeout_sec 1 × 0.2.
    let budget = hook_budget_secs(&agents, "hooks-slow");
    assert_eq!(budget, 0.2);
    for t in &timeouts {
        assert_eq!(t.get("timeout_sec"), budget, "{t:?}");
    }
    assert_eq!(out.retained, ["pre_compact:slow", "post_compact:slow"]);
    assert!(
        out.injects[1]
            .1
            .contains("compacted=[m1,m2] remaining=[k1,m3]"),
        "{:?}",
        out.injects
    );
    // The chain order within the operation: the timeout, then failed, then completed.
    let order = trail(
        &out.audit,
        &[
            AuditEvent::HookTimeout,
            AuditEvent::CompactionFailed,
            AuditEvent::CompactionCompleted,
        ],
    );
    let names: Vec<&str> = order.iter().map(|o| o.0).collect();
    assert_eq!(
        names,
        [
            "plugin.hook.timeout",
            "compaction.failed",
            "compaction.completed",
            "plugin.hook.timeout"
        ]
    );
    finish(agents).await;
}

#[tokio::test]
async fn dropping_an_always_keep_message_is_snapshotted() {
    let (agents, _audit, transcript) = start("firing-invalid.yaml").await;
    let mark = transcript.records().len();
    let out = agents
        .compact(&sub("drops-keep"), request("ses_1"))
        .await
        .expect("compact");
    assert_fallback(&out, "hooks-drops-keep", "compactor_dropped_always_keep");
    // post_compact observers see the fallback's result.
    assert_eq!(
        out.retained,
        ["pre_compact:drops-keep", "post_compact:drops-keep"]
    );
    crate::assert_outcome_snapshot!("drops_keep_outcome", out);
    let records = transcript.records();
    insta::assert_json_snapshot!(
        "drops_keep_transcript",
        normal_form(
            records.get(mark..).unwrap_or_default(),
            &[],
            &NormalOptions::default()
        )
        .to_values()
    );
    finish(agents).await;
}
