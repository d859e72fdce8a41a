//! The echo example under `kaged-conformance fuzz`: every property its
//! manifest gives something to exercise holds over a seeded run bounded by
//! a call count (the binary of this build, staged as the daemon would run
//! it); the four it gives nothing to exercise (no config schema, no hooks,
//! no compactor role) are skipped with the reason, not reported as held.

use std::path::PathBuf;

use kaged_conformance::fuzz::{fuzz, fuzz_report, FuzzOptions};
use kaged_conformance::report::Status;
use kaged_host_core::testing::StagedPlugin;
use kaged_host_core::time::TimeScale;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echo_fuzzes_clean_and_skips_what_it_does_not_declare() {
    let staged = StagedPlugin::new(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        env!("CARGO_BIN_EXE_echo"),
    )
    .expect("stage the echo plugin");
    let opts = FuzzOptions {
        duration: None,
        max_calls: Some(400),
        seed: 3,
        time_scale: TimeScale::new(0.1).expect("a scale"),
        soak_calls: 300,
        ..FuzzOptions::default()
    };
    let outcome = fuzz(staged.dir(), &opts).await.expect("the fuzzer runs");
    let report = fuzz_report(&outcome, "echo", 0.1, "");
    let json = report.to_json();
    assert_eq!(report.exit_code(false), 0, "{json}");
    let with = |status: Status| -> Vec<(&str, &str)> {
        report
            .cases
            .iter()
            .filter(|c| c.status == status)
            .map(|c| (c.id.as_str(), c.detail.as_str()))
            .collect()
    };
    let skipped = with(Status::Skip);
    let ids: Vec<&str> = skipped.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        ids,
        [
            "fuzz.invalid_config_rejected",
            "fuzz.valid_config_accepted",
            "fuzz.hook_answers",
            "fuzz.compactor_contract",
        ],
        "{json}"
    );
    for ((id, detail), why) in skipped.iter().zip([
        "no config_schema",
        "no config_schema",
        "no hooks",
        "does not claim the compactor role",
    ]) {
        assert!(
            detail.starts_with("not applicable: ") && detail.contains(why),
            "{id}: {detail}"
        );
    }
    // The other six were exercised and held.
    let passed = with(Status::Pass);
    assert_eq!(passed.len(), 6, "{json}");
    assert!(
        passed
            .iter()
            .all(|(id, d)| d.starts_with("held over ") || *id == "fuzz.memory_bounded"),
        "{json}"
    );
}
