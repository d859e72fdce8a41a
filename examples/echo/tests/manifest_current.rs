//! `manifest.current` judges the echo plugin's manifest against what its
//! binary generates: the installed copy passes; the same copy with a
//! manifest that drifted from the code (a notification dropped, the
//! description edited by hand) warns, naming each drifted field and how to
//! regenerate.

use std::path::PathBuf;

use kaged_conformance::catalogue::MANIFEST_CURRENT;
use kaged_conformance::report::Status;
use kaged_conformance::selection::{Pattern, Selection};
use kaged_conformance::testing::{InstalledCopy, TEST_TIME_SCALE};
use kaged_conformance::{run_suite, Options};
use kaged_host_core::{CageMode, TimeScale};

fn installed() -> InstalledCopy {
    InstalledCopy::new(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        env!("CARGO_BIN_EXE_echo").as_ref(),
    )
    .expect("pack and install echo")
}

fn options() -> Options {
    Options {
        time_scale: TimeScale::new(TEST_TIME_SCALE).expect("a scale"),
        cage: CageMode::Auto,
        selection: Selection {
            only: vec![Pattern::new("manifest.*")],
            skip: Vec::new(),
        },
        ..Options::default()
    }
}

#[test]
fn a_current_manifest_passes_and_a_drifted_one_warns_naming_the_fix() {
    let copy = installed();
    let report = run_suite(copy.dir(), &options()).expect("the suite runs");
    let case = report.case(MANIFEST_CURRENT.id);
    assert_eq!(case.status, Status::Pass, "{}", case.detail);

    let path = copy.dir().join("kaged-plugin.yaml");
    let text = std::fs::read_to_string(&path).expect("manifest");
    let drifted = text.replace("notifications:\n  - echo.said\n", "").replace(
        "description: Echoes text back;",
        "description: Echoes text;",
    );
    assert_ne!(drifted, text, "the edit applies");
    std::fs::write(&path, drifted).expect("write");
    let report = run_suite(copy.dir(), &options()).expect("the suite runs");
    let case = report.case(MANIFEST_CURRENT.id);
    assert_eq!(case.status, Status::Warn, "{}", case.detail);
    for needle in [
        "notifications: on disk absent",
        "description:",
        "--print-manifest > kaged-plugin.yaml",
    ] {
        assert!(
            case.detail.contains(needle),
            "{needle:?} in {}",
            case.detail
        );
    }
}
