//! A transcript snapshot test as a plugin author writes one: retain, then
//! recall and list the tags, snapshotted in the normal form
//! (`kaged_host_core::normal`); the store lives under a temporary config
//! root, `[config_root]` in the snapshot.

use kaged_host_core::testing::StagedPlugin;
use kaged_host_core::TimeScale;
use kaged_host_engine::scenario::Scenario;
use kaged_plugin_sdk::protocol::PluginCallContext;
use serde_json::json;

#[test]
fn recall_and_tags_of_an_empty_store_transcript() {
    let staged = StagedPlugin::new(
        env!("CARGO_MANIFEST_DIR").as_ref(),
        env!("CARGO_BIN_EXE_memory-markdown"),
    )
    .expect("stage memory-markdown");
    let root = tempfile::tempdir().expect("config root");
    let agent = PluginCallContext::agent("music", "primary", "ses_1", "req_1");
    let run = Scenario::new()
        .call_as(
            "memory-markdown.recall",
            json!({"query": "deploy"}),
            agent.clone(),
        )
        .call_as("memory-markdown.list_tags", json!({}), agent)
        .config_root(root.path())
        .time_scale(TimeScale::new(0.5).expect("scale"))
        .run_blocking(staged.dir())
        .expect("the scenario runs");
    kaged_host_engine::assert_transcript_snapshot!("recall_and_tags", run);
}
