//! echo's conformance profile (`kaged-conformance.yaml`) against what its
//! binary generates (`echo --print-profile`): the checked-in one passes
//! `profile.current` and its examples are called; a copy whose schema
//! drifted from the code, or that lost a generated example, warns naming
//! each and how to regenerate.

use std::path::PathBuf;

use kaged_conformance::catalogue::{METHODS_EXAMPLES, PROFILE_CURRENT};
use kaged_conformance::report::Status;
use kaged_conformance::selection::{Pattern, Selection};
use kaged_conformance::testing::{InstalledCopy, TEST_TIME_SCALE};
use kaged_conformance::{run_suite, Options};
use kaged_host_core::{CageMode, TimeScale};

fn here() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn options(profile: PathBuf) -> Options {
    Options {
        time_scale: TimeScale::new(TEST_TIME_SCALE).expect("a scale"),
        cage: CageMode::Auto,
        selection: Selection {
            only: vec![Pattern::new("profile.*"), Pattern::new("methods.examples*")],
            skip: Vec::new(),
        },
        profile: Some(profile),
        ..Options::default()
    }
}

#[test]
fn a_current_profile_passes_and_a_drifted_one_warns_naming_the_fix() {
    let copy = InstalledCopy::new(&here(), env!("CARGO_BIN_EXE_echo").as_ref())
        .expect("pack and install echo");
    let checked_in = here().join("kaged-conformance.yaml");
    let report = run_suite(copy.dir(), &options(checked_in.clone())).expect("the suite runs");
    let case = report.case(PROFILE_CURRENT.id);
    assert_eq!(case.status, Status::Pass, "{}", case.detail);
    let say = report.case(&METHODS_EXAMPLES.instance_id("echo.say"));
    assert_eq!(say.status, Status::Pass, "{}", say.detail);
    assert!(
        say.detail
            .contains(r#"echo.say({"text":"hello"}) answered {"said":"hello","agent_path":null}"#),
        "{}",
        say.detail
    );

    let text = std::fs::read_to_string(&checked_in).expect("profile");
    let drifted = text
        .replace("description: The text to echo.", "description: The text.")
        .replace("      - params:\n          text: hello\n", "");
    assert_ne!(drifted, text, "the edit applies");
    let path = copy.root().join("drifted-kaged-conformance.yaml");
    std::fs::write(&path, drifted).expect("write");
    let report = run_suite(copy.dir(), &options(path)).expect("the suite runs");
    let case = report.case(PROFILE_CURRENT.id);
    assert_eq!(case.status, Status::Warn, "{}", case.detail);
    for needle in [
        "methods.echo.say.params_schema: on disk",
        r#"the generated example {"text":"hello"} is absent on disk"#,
        "--print-profile > drifted-kaged-conformance.yaml",
    ] {
        assert!(
            case.detail.contains(needle),
            "{needle:?} in {}",
            case.detail
        );
    }
}
