//! A transcript snapshot test as a plugin author writes one: a scenario,
//! run on the simulated daemon, snapshotted in the normal form
//! (`kaged_host_core::normal`: the same bytes run after run).

use kaged_host_core::testing::StagedPlugin;
use kaged_host_engine::scenario::Scenario;
use kaged_plugin_sdk::protocol::PluginCallContext;
use serde_json::json;

#[test]
fn say_and_shout_transcript() {
    let staged = StagedPlugin::new(
        env!("CARGO_MANIFEST_DIR").as_ref(),
        env!("CARGO_BIN_EXE_echo"),
    )
    .expect("stage echo");
    let agent = PluginCallContext::agent("music", "primary", "ses_1", "req_1");
    let run = Scenario::new()
        .call_as("echo.say", json!({"text": "hi"}), agent.clone())
        .calls([
            ("echo.say", json!({"text": "a"})),
            ("echo.say", json!({"text": "b"})),
        ])
        .call_as("echo.shout", json!({"text": "hey", "bangs": 2}), agent)
        .run_blocking(staged.dir())
        .expect("the scenario runs");
    kaged_host_engine::assert_transcript_snapshot!("say_and_shout", run);
}
