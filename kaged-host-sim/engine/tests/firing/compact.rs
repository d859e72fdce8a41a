//! Compaction through [`AgentHost::compact`] when it works: a valid
//! compactor replaces the strategy, no compactor runs the strategy (drop),
//! only the affected agent's plugins are called, hooks are serialized per
//! plugin. Real plugin processes; transcripts snapshot-tested.

use crate::support::firing::{finish, ids, of, request, sent, start, trail};
use kaged_host_core::normal::{normal_form, NormalOptions};
use kaged_host_core::{AuditEvent, Transcript};
use kaged_host_engine::CompactionOutcome;
use serde_json::Value;

const PLAIN: &str = "primary.subagents.plain";
const QUIET: &str = "primary.subagents.quiet";

fn wrapped(name: &str, text: &str) -> String {
    format!("<plugin:{name}>\n{text}\n</plugin:{name}>")
}

/// The normalised wire transcript from record `mark` on.
fn transcript_since(t: &Transcript, mark: usize) -> Vec<Value> {
    let records = t.records();
    normal_form(
        records.get(mark..).unwrap_or_default(),
        &[],
        &NormalOptions::default(),
    )
    .to_values()
}

fn compaction_events(out: &CompactionOutcome) -> Vec<(&'static str, String)> {
    trail(
        &out.audit,
        &[
            AuditEvent::CompactionFailed,
            AuditEvent::CompactionCompleted,
        ],
    )
}

#[tokio::test]
async fn a_valid_compactor_replaces_the_strategy_and_post_compact_sees_the_result() {
    let (agents, _audit, transcript) = start("firing-compact.yaml").await;
    let mark = transcript.records().len();
    let out = agents
        .compact("primary", request("ses_1").strategy("summarize"))
        .await
        .expect("compact");
    // The compactor's list, not the strategy's.
    assert_eq!(ids(&out.messages), ["summary_1", "k1", "m3"]);
    assert_eq!(out.superseded, ["m1", "m2"]);
    assert_eq!(out.compactor.as_deref(), Some("hooks-compactor"));
    assert!(!out.fallback);
    assert_eq!(out.applied, "compactor");
    assert_eq!(out.summary.as_deref(), Some("summarised m1,m2"));
    assert_eq!(
        compaction_events(&out),
        [("compaction.completed", "hooks-compactor".to_string())]
    );
    let done = of(&out.audit, AuditEvent::CompactionCompleted)[0];
    assert_eq!(done.get("strategy"), "compactor");
    assert_eq!(done.get("plugin"), "hooks-compactor");
    assert_eq!(done.get("fallback"), false);
    // pre_compact in declaration order with each plugin's role; then
    // post_compact with the result.
    let roles: Vec<(String, String)> = sent(&transcript, "kaged.hook.pre_compact")
        .iter()
        .map(|m| {
            let p = &m["params"];
            (p["role"].to_string(), p["strategy"].to_string())
        })
        .collect();
    assert_eq!(
        roles,
        [
            ("\"observer\"".into(), "\"summarize\"".into()),
            ("\"compactor\"".into(), "\"summarize\"".into()),
            ("\"observer\"".into(), "\"summarize\"".into())
        ]
    );
    let fired = trail(&out.audit, &[AuditEvent::HookFired]);
    let fired: Vec<&str> = fired.iter().map(|f| f.1.as_str()).collect();
    assert_eq!(
        fired,
        [
            "hooks-observer",
            "hooks-compactor",
            "hooks-greeter",
            "hooks-observer",
            "hooks-compactor",
            "hooks-greeter"
        ]
    );
    assert_eq!(
        out.injects,
        [
            (
                "hooks-observer".to_string(),
                wrapped(
                    "hooks-observer",
                    "pre_compact role=observer compacted=[m1,k1,m2] remaining=[m3] tag=primary"
                )
            ),
            (
                "hooks-observer".to_string(),
                wrapped(
                    "hooks-observer",
                    "post_compact role=observer compacted=[m1,m2] remaining=[summary_1,k1,m3] tag=primary"
                )
            ),
        ]
    );
    assert_eq!(
        out.retained,
        [
            "pre_compact:primary",
            "post_compact:primary",
            "compactor saw summary_1,k1,m3"
        ]
    );
    crate::assert_outcome_snapshot!("valid_compactor_outcome", out);
    insta::assert_json_snapshot!(
        "valid_compactor_transcript",
        transcript_since(&transcript, mark)
    );
    finish(agents).await;
}

#[tokio::test]
async fn without_a_compactor_the_strategy_runs_as_drop() {
    let (agents, _audit, transcript) = start("firing-compact.yaml").await;
    let mark = transcript.records().len();
    let out = agents
        .compact(PLAIN, request("ses_1").strategy("summarize"))
        .await
        .expect("compact");
    assert_eq!(ids(&out.messages), ["k1", "m3"]);
    assert_eq!(out.superseded, ["m1", "m2"]);
    assert_eq!(out.compactor, None);
    assert!(!out.fallback);
    assert_eq!(out.applied, "drop");
    let done = of(&out.audit, AuditEvent::CompactionCompleted);
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].get("strategy"), "summarize");
    assert_eq!(done[0].get("applied"), "drop");
    assert_eq!(done[0].get("fallback"), false);
    assert!(of(&out.audit, AuditEvent::CompactionFailed).is_empty());
    // Only the plugins declared on `plain`, all with agent_path = plain.
    let fired = of(&out.audit, AuditEvent::HookFired);
    let names: Vec<&str> = fired.iter().map(|r| r.plugin.as_str()).collect();
    assert_eq!(
        names,
        [
            "hooks-observer",
            "hooks-malformed",
            "hooks-observer",
            "hooks-malformed"
        ]
    );
    assert!(fired.iter().all(|r| r.get("agent_path") == PLAIN));
    // The malformed observer's answers are logged and ignored.
    let failed = of(&out.audit, AuditEvent::HookFailed);
    assert_eq!(failed.len(), 2);
    assert!(failed
        .iter()
        .all(|r| r.plugin == "hooks-malformed" && r.get("malformed_answer") == true));
    assert_eq!(out.retained, ["pre_compact:plain", "post_compact:plain"]);
    assert!(
        out.injects[1].1.contains("remaining=[k1,m3]"),
        "{:?}",
        out.injects
    );
    crate::assert_outcome_snapshot!("drop_strategy_outcome", out);
    insta::assert_json_snapshot!(
        "drop_strategy_transcript",
        transcript_since(&transcript, mark)
    );
    finish(agents).await;
}

#[tokio::test]
async fn an_agent_without_compaction_subscribers_fires_nothing() {
    let (agents, _audit, transcript) = start("firing-compact.yaml").await;
    let out = agents
        .compact(QUIET, request("ses_1"))
        .await
        .expect("compact");
    assert!(of(&out.audit, AuditEvent::HookFired).is_empty());
    assert!(sent(&transcript, "kaged.hook.pre_compact").is_empty());
    assert_eq!(ids(&out.messages), ["k1", "m3"]);
    assert_eq!(
        compaction_events(&out),
        [("compaction.completed", "kaged".to_string())]
    );
    finish(agents).await;
}

#[tokio::test]
async fn hooks_are_serialized_per_plugin() {
    let (agents, audit, _t) = start("firing-compact.yaml").await;
    let mark = audit.len();
    // Two agents compact at once; hooks-observer serves both.
    let (a, b) = tokio::join!(
        agents.compact("primary", request("ses_1")),
        agents.compact(PLAIN, request("ses_2")),
    );
    let (a, b) = (a.expect("primary"), b.expect("plain"));
    // The fixture reports any overlapping hook call; each agent's own
    // config reached it for its own hooks.
    for r in a.retained.iter().chain(&b.retained) {
        assert_ne!(r, "OVERLAP");
    }
    assert!(
        a.retained.contains(&"pre_compact:primary".to_string()),
        "{:?}",
        a.retained
    );
    assert!(
        b.retained.contains(&"post_compact:plain".to_string()),
        "{:?}",
        b.retained
    );
    // fired/returned strictly alternate for the shared plugin.
    let observer: Vec<&'static str> = audit
        .since(mark)
        .iter()
        .filter(|r| r.plugin == "hooks-observer")
        .filter(|r| matches!(r.event, AuditEvent::HookFired | AuditEvent::HookReturned))
        .map(|r| r.event.as_str())
        .collect();
    assert_eq!(observer.len(), 8, "{observer:?}");
    for pair in observer.chunks(2) {
        assert_eq!(pair, ["plugin.hook.fired", "plugin.hook.returned"]);
    }
    finish(agents).await;
}
