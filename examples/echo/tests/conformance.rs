//! The echo example certified by `kaged-conformance`: every case that
//! applies to it passes (it has no hooks and is not a compactor).

use kaged_conformance::report::Status;
use kaged_conformance::testing::assert_conforms;

#[test]
fn echo_passes_the_conformance_suite() {
    let report = assert_conforms(
        env!("CARGO_MANIFEST_DIR").as_ref(),
        env!("CARGO_BIN_EXE_echo"),
    );
    assert_eq!(report.plugin.name, "echo");
    assert!(
        report.plugin.dir.ends_with("store/plugins/echo"),
        "certified from the installed copy of the packed plugin: {}",
        report.plugin.dir
    );
    assert_eq!(
        report.skipped_ids(),
        [
            // Its wire transcripts are insta snapshots (tests/), not golden
            // files: nothing for golden.transcripts to check.
            "golden.transcripts",
            "hooks.answers",
            "compaction.compactor_contract",
            "config.invalid_rejected",
            // No storage use: no request of its own to judge.
            "protocol.request_ids_monotonic"
        ],
        "only what does not apply is skipped"
    );
    let tool = report.case("methods.tool_invalid_args[echo.shout]");
    assert_eq!(tool.status, Status::Pass, "{}", tool.detail);
    // Its profile (kaged-conformance.yaml): echo.say is called with real
    // params, and refuses the ones it lists.
    for id in [
        "profile.valid",
        "profile.current",
        "methods.examples[echo.say]",
        "methods.invalid_params[echo.say]",
    ] {
        let case = report.case(id);
        assert_eq!(case.status, Status::Pass, "{id}: {}", case.detail);
    }
}
