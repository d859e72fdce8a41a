//! oh-my-pi certified by `kaged-conformance`, on the suite's own storage
//! broker: no storage access of its is denied.

use kaged_conformance::report::Status;
use kaged_conformance::testing::assert_conforms;

#[test]
fn oh_my_pi_passes_the_conformance_suite() {
    let report = assert_conforms(
        env!("CARGO_MANIFEST_DIR").as_ref(),
        env!("CARGO_BIN_EXE_oh-my-pi"),
    );
    assert_eq!(report.plugin.name, "oh-my-pi");
    assert!(
        report.plugin.dir.ends_with("store/plugins/oh-my-pi"),
        "certified from the installed copy of the packed plugin: {}",
        report.plugin.dir
    );
    assert_eq!(
        report.skipped_ids(),
        [
            // No conformance profile (its types derive no JsonSchema): its
            // methods are called with {} only, and the report says so.
            "profile.valid",
            "profile.current",
            // Its wire transcripts are insta snapshots (tests/), not golden
            // files: nothing for golden.transcripts to check.
            "golden.transcripts",
            "methods.examples[presets.list]",
            "methods.invalid_params[presets.list]",
            "methods.examples[presets.search]",
            "methods.invalid_params[presets.search]",
            "methods.examples[preset.get]",
            "methods.invalid_params[preset.get]",
            "methods.examples[preset.install]",
            "methods.invalid_params[preset.install]",
            "methods.examples[preset.uninstall]",
            "methods.invalid_params[preset.uninstall]",
            "methods.tool_valid_args",
            "methods.tool_invalid_args",
            "hooks.answers",
            "compaction.compactor_contract"
        ],
        "it declares no tools, hooks or compactor role, and has no profile"
    );
    let storage = report.case("storage.no_denials");
    assert_eq!(storage.status, Status::Pass, "{}", storage.detail);
}
