//! The SDK testbed certified by `kaged-conformance`: even its deliberately
//! misbehaving methods (panics, stray `println!`, size limits) answer
//! within the protocol, so every case that applies passes.

use kaged_conformance::report::Status;
use kaged_conformance::testing::assert_conforms;

#[test]
fn sdk_testbed_passes_the_conformance_suite() {
    let report = assert_conforms(
        env!("CARGO_MANIFEST_DIR").as_ref(),
        env!("CARGO_BIN_EXE_sdk-testbed"),
    );
    assert_eq!(report.plugin.name, "sdk-testbed");
    assert_eq!(
        report.skipped_ids(),
        [
            // No conformance profile: its methods misbehave on purpose
            // (panic, sleep...), so none is checked in; they are called
            // with {} only.
            "profile.valid",
            "profile.current",
            // Its wire transcripts are insta snapshots (tests/), not golden
            // files: nothing for golden.transcripts to check.
            "golden.transcripts",
            "methods.examples[testbed.echo]",
            "methods.invalid_params[testbed.echo]",
            "methods.examples[testbed.print]",
            "methods.invalid_params[testbed.print]",
            "methods.examples[testbed.panic]",
            "methods.invalid_params[testbed.panic]",
            "methods.examples[testbed.big]",
            "methods.invalid_params[testbed.big]",
            "methods.examples[testbed.sleep]",
            "methods.invalid_params[testbed.sleep]",
            "methods.examples[testbed.store]",
            "methods.invalid_params[testbed.store]",
            "methods.examples[testbed.store_many]",
            "methods.invalid_params[testbed.store_many]",
            "methods.examples[testbed.notify]",
            "methods.invalid_params[testbed.notify]",
            "methods.tool_valid_args",
            "methods.tool_invalid_args",
            "hooks.answers",
            "compaction.compactor_contract",
            "config.invalid_rejected",
        ],
        "only what does not apply is skipped"
    );
    // `testbed.store` asks the host's storage: its request ids are judged.
    assert_eq!(
        report.case("protocol.request_ids_monotonic").status,
        Status::Pass
    );
    let panic = report.case("methods.answers[testbed.panic]");
    assert_eq!(panic.status, Status::Pass);
    assert!(
        panic.detail.contains("well-formed error -32603"),
        "{}",
        panic.detail
    );
}
