//! summarizing-compactor certified by `kaged-conformance`: as the designated
//! compactor its `pre_compact` answer is a valid `CompactorResult`.

use kaged_conformance::report::Status;
use kaged_conformance::testing::assert_conforms;

#[test]
fn summarizing_compactor_passes_the_conformance_suite() {
    let report = assert_conforms(
        env!("CARGO_MANIFEST_DIR").as_ref(),
        env!("CARGO_BIN_EXE_summarizing-compactor"),
    );
    assert_eq!(report.plugin.name, "summarizing-compactor");
    assert_eq!(
        report.skipped_ids(),
        [
            "profile.valid",
            "profile.current",
            // Its wire transcripts are insta snapshots (tests/), not golden
            // files: nothing for golden.transcripts to check.
            "golden.transcripts",
            "methods.examples",
            "methods.invalid_params",
            "methods.answers",
            "methods.tool_valid_args",
            "methods.tool_invalid_args",
            "protocol.request_ids_monotonic"
        ],
        "it declares no methods and no tools, and sends no request of its own"
    );
    let compactor = report.case("compaction.compactor_contract");
    assert_eq!(compactor.status, Status::Pass, "{}", compactor.detail);
}
