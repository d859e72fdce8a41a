//! The normal form of a real plugin's transcript is deterministic by
//! construction: concurrent calls answered out of order, a notification,
//! and a storage round trip (a plugin request inside a call) give the
//! same bytes run after run, with ids paired.

use crate::support::host::fixture;
use kaged_host_engine::scenario::Scenario;
use kaged_plugin_protocol::PluginCallContext;
use serde_json::{json, Value};

/// The scenario: a call, four calls at once (two answered in reverse
/// order, one notifying, one asking the host for storage), a
/// notification wait.
fn scenario() -> Scenario {
    Scenario::new()
        .call_as(
            "good.echo",
            json!({"text": "hi"}),
            PluginCallContext::agent("music", "primary", "ses_1", "req_1"),
        )
        .calls([
            ("delay.echo", json!({"n": 1, "ms": 40})),
            ("delay.echo", json!({"n": 2, "ms": 0})),
            ("notify.emit", json!({"n": 3})),
            ("storage.try", json!({})),
        ])
        .call("notify.emit", json!({"n": 4}))
        .wait("echo.done")
}

#[test]
fn the_normal_form_is_the_same_fifty_runs_in_a_row() {
    let dir = fixture("good");
    let first = scenario().run_blocking(&dir).expect("runs");
    first.assert_ok();
    let golden = first.transcript.to_jsonl();
    for run in 1..50 {
        let again = scenario().run_blocking(&dir).expect("runs");
        again.assert_ok();
        assert_eq!(again.transcript.to_jsonl(), golden, "run {run} differs");
    }
    kaged_host_engine::assert_transcript_snapshot!("good_scenario_normal_form", first);
}

#[test]
fn answers_keep_the_id_of_their_request() {
    let run = scenario().run_blocking(&fixture("good")).expect("runs");
    let msgs: Vec<&Value> = run.transcript.messages.iter().collect();
    let mut host_ids = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        let msg = &m["msg"];
        if m["dir"] == "host>plugin" && msg.get("method").is_some() && msg.get("id").is_some() {
            host_ids.push(msg["id"].as_u64().expect("an integer id"));
            // Its answer follows, after only what the plugin sent while
            // serving it (its requests with the host's answers, its
            // notifications): never another call of the host's.
            let answer = msgs[i + 1..]
                .iter()
                .find(|m| {
                    m["dir"] == "plugin>host"
                        && (m["msg"].get("result").is_some() || m["msg"].get("error").is_some())
                })
                .expect("an answer follows");
            assert_eq!(answer["msg"]["id"], msg["id"], "{answer}");
            let between = msgs[i + 1..]
                .iter()
                .take_while(|m| !std::ptr::eq(**m, *answer));
            for m in between {
                let from_plugin = m["dir"] == "plugin>host" && m["msg"].get("method").is_some();
                let host_answer = m["dir"] == "host>plugin" && m["msg"].get("method").is_none();
                assert!(from_plugin || host_answer, "inside the call of {msg}: {m}");
            }
        }
    }
    let expected: Vec<u64> = (1..=host_ids.len() as u64).collect();
    assert_eq!(host_ids, expected, "host ids renumbered from 1 in order");
    // The delayed calls are shown in the order sent, whatever order the
    // plugin answered in.
    let delayed: Vec<&Value> = msgs
        .iter()
        .filter(|m| m["dir"] == "plugin>host" && m["msg"]["result"].get("n").is_some())
        .map(|m| &m["msg"]["result"]["n"])
        .collect();
    assert_eq!(delayed, [&json!(1), &json!(2)]);
    // The plugin's own request is numbered in its own direction, from 1,
    // and the host's answer follows it.
    let asked = msgs
        .iter()
        .position(|m| m["dir"] == "plugin>host" && m["msg"]["method"] == "kaged.storage.query")
        .expect("the storage request");
    assert_eq!(msgs[asked]["msg"]["id"], 1);
    assert_eq!(msgs[asked + 1]["dir"], "host>plugin");
    assert_eq!(msgs[asked + 1]["msg"]["id"], 1);
    // Volatile values are gone, paths are placeholders.
    let text = run.transcript.to_jsonl();
    assert!(
        !text.contains("\"pid\"") && !text.contains("\"ts\""),
        "{text}"
    );
    assert!(text.contains("[daemon_version]"), "{text}");
}
