//! The echo example under `kaged-conformance fuzz`: every property holds
//! over a seeded run (the binary of this build, staged as the daemon would
//! run it).

use std::path::PathBuf;
use std::time::Duration;

use kaged_conformance::fuzz::{fuzz, fuzz_report, FuzzOptions};
use kaged_conformance::report::Status;
use kaged_host_sim::testing::StagedPlugin;
use kaged_host_sim::time::TimeScale;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echo_fuzzes_clean() {
    let staged = StagedPlugin::new(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        env!("CARGO_BIN_EXE_echo"),
    )
    .expect("stage the echo plugin");
    let opts = FuzzOptions {
        duration: Duration::from_secs(60),
        max_calls: Some(400),
        seed: 3,
        time_scale: TimeScale::new(0.1).expect("a scale"),
        soak_calls: 300,
        ..FuzzOptions::default()
    };
    let outcome = fuzz(staged.dir(), &opts).await.expect("the fuzzer runs");
    let report = fuzz_report(&outcome, "echo", 0.1, "");
    assert_eq!(report.exit_code(false), 0, "{}", report.to_json());
    assert!(
        report.cases.iter().all(|c| c.status == Status::Pass),
        "{}",
        report.to_json()
    );
}
