//! The SDK testbed certified by `kaged-conformance`: even its deliberately
//! misbehaving methods (panics, stray `println!`, size limits) answer
//! within the protocol, so every case that applies passes.

use std::path::PathBuf;

use kaged_conformance::report::{render_human, Status};
use kaged_conformance::{run_suite, Options};
use kaged_host_sim::testing::StagedPlugin;
use kaged_host_sim::time::TimeScale;

#[test]
fn sdk_testbed_passes_the_conformance_suite() {
    let staged = StagedPlugin::new(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        env!("CARGO_BIN_EXE_sdk-testbed"),
    )
    .expect("stage the sdk-testbed plugin");
    let options = Options {
        time_scale: TimeScale::new(0.25).expect("valid scale"),
        ..Options::default()
    };
    let report = run_suite(staged.dir(), &options).expect("the suite runs");
    assert_eq!(report.plugin.name, "sdk-testbed");
    assert_eq!(
        report.summary.failed + report.summary.warned,
        0,
        "\n{}",
        render_human(&report, false, true)
    );
    assert_eq!(report.exit_code(true), 0);
    let skipped: Vec<&str> = report
        .cases
        .iter()
        .filter(|c| c.status == Status::Skip)
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(
        skipped,
        [
            "methods.tool_valid_args",
            "methods.tool_invalid_args",
            "hooks.answers",
            "compaction.compactor_contract"
        ],
        "only what does not apply is skipped"
    );
    let panic = report
        .cases
        .iter()
        .find(|c| c.id == "methods.answers[testbed.panic]")
        .expect("panic case");
    assert_eq!(panic.status, Status::Pass);
    assert!(
        panic.detail.contains("well-formed error -32603"),
        "{}",
        panic.detail
    );
}
