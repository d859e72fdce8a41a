//! Every way a designated compactor can fail falls back to drop with
//! exactly `compaction.failed` then `compaction.completed {strategy:
//! "drop", fallback: true}` (ADDENDUM §5). Real plugin processes
//! (`tests/fixtures/projects/firing-invalid.yaml`).

use crate::support::firing::{finish, ids, of, outcome_snapshot, request, start, trail};
use kaged_host_sim::transcript::normalise;
use kaged_host_sim::{AuditEvent, CompactionOutcome};
use kaged_plugin_protocol::{
    drop_fallback, CompactParams, CompactorViolation, PluginCallContext, PluginRole,
};

/// What the drop fallback of the test request must give, computed by the
/// SDK's one implementation.
fn expected_drop() -> (Vec<String>, Vec<String>) {
    let req = request("ses_x");
    let params = CompactParams {
        context: PluginCallContext::agent("p", "primary", "s", "r"),
        role: PluginRole::Compactor,
        messages_being_compacted: req.messages_being_compacted,
        messages_remaining: req.messages_remaining,
        strategy: req.strategy,
        trigger: req.trigger,
    };
    let d = drop_fallback(&params);
    (d.messages.into_iter().map(|m| m.id).collect(), d.superseded)
}

fn assert_fallback(out: &CompactionOutcome, plugin: &str, reason: &str) {
    let path = &out.agent_path;
    let (messages, superseded) = expected_drop();
    assert_eq!(ids(&out.messages), messages, "{path}");
    assert_eq!(out.superseded, superseded, "{path}");
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
    let s = String::new;
    let cases = [
        (
            "drops-keep",
            "hooks-drops-keep",
            CompactorViolation::DroppedAlwaysKeep(s()).reason(),
        ),
        (
            "bad-superseded",
            "hooks-bad-superseded",
            CompactorViolation::SupersededNotCompacted(s()).reason(),
        ),
        (
            "null-answer",
            "hooks-null-compactor",
            CompactorViolation::NotACompactorResult(s()).reason(),
        ),
        (
            "empty-object",
            "hooks-scripted",
            CompactorViolation::NotACompactorResult(s()).reason(),
        ),
        (
            "observer-shaped",
            "hooks-scripted",
            CompactorViolation::NotACompactorResult(s()).reason(),
        ),
        (
            "wrong-role",
            "hooks-scripted",
            CompactorViolation::WrongRole.reason(),
        ),
        (
            "malformed",
            "hooks-scripted",
            CompactorViolation::Malformed(s()).reason(),
        ),
        (
            "superseded-keep",
            "hooks-scripted",
            CompactorViolation::SupersededAlwaysKeep(s()).reason(),
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
    assert_fallback(&out, "hooks-drops-keep", "dropped_always_keep");
    // post_compact observers see the fallback's result.
    assert_eq!(
        out.retained,
        ["pre_compact:drops-keep", "post_compact:drops-keep"]
    );
    insta::assert_json_snapshot!("drops_keep_outcome", outcome_snapshot(&out));
    let records = transcript.records();
    insta::assert_json_snapshot!(
        "drops_keep_transcript",
        normalise(records.get(mark..).unwrap_or_default(), false)
    );
    finish(agents).await;
}
