//! memory-markdown certified by `kaged-conformance`: its four tools (called
//! with an agent context), all four hooks and the rest of the protocol.

use kaged_conformance::testing::assert_conforms;

#[test]
fn memory_markdown_passes_the_conformance_suite() {
    let report = assert_conforms(
        env!("CARGO_MANIFEST_DIR").as_ref(),
        env!("CARGO_BIN_EXE_memory-markdown"),
    );
    assert_eq!(report.plugin.name, "memory-markdown");
    assert_eq!(
        report.skipped_ids(),
        [
            // No custom method: no conformance profile to check or call.
            "profile.valid",
            "profile.current",
            // Its wire transcripts are insta snapshots (tests/), not golden
            // files: nothing for golden.transcripts to check.
            "golden.transcripts",
            "methods.examples",
            "methods.invalid_params",
            "compaction.compactor_contract",
            "protocol.request_ids_monotonic"
        ],
        "it has no custom method, is no compactor and sends no request of its own"
    );
    for tool in ["retain", "recall", "forget", "list_tags"] {
        let id = format!("methods.tool_valid_args[memory-markdown.{tool}]");
        assert!(report.cases.iter().any(|c| c.id == id), "{id} ran");
    }
}
