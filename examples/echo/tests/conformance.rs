//! The echo example certified by `kaged-conformance`: every case that
//! applies to it passes (it has no hooks and is not a compactor).

use std::path::PathBuf;

use kaged_conformance::report::{render_human, Status};
use kaged_conformance::{run_suite, Options};
use kaged_host_sim::testing::StagedPlugin;
use kaged_host_sim::time::TimeScale;

#[test]
fn echo_passes_the_conformance_suite() {
    let staged = StagedPlugin::new(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        env!("CARGO_BIN_EXE_echo"),
    )
    .expect("stage the echo plugin");
    let options = Options {
        time_scale: TimeScale::new(0.25).expect("valid scale"),
        ..Options::default()
    };
    let report = run_suite(staged.dir(), &options).expect("the suite runs");
    assert_eq!(report.plugin.name, "echo");
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
        ["hooks.answers", "compaction.compactor_contract"],
        "only what does not apply is skipped"
    );
    let tool = report
        .cases
        .iter()
        .find(|c| c.id == "methods.tool_invalid_args[echo.shout]")
        .expect("tool case");
    assert_eq!(tool.status, Status::Pass, "{}", tool.detail);
}
