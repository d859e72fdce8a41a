//! `launch.self_contained` (MUST) on a plugin whose runtime dependency lives
//! in a directory version control ignores, as a TypeScript plugin's
//! `node_modules/` does: the fixture `gitignored-deps` imports
//! `vendor/greeting.py`, and each test builds the plugin in a temporary
//! directory (the fixture's files, then `vendor/` and the `.gitignore`
//! naming it, which git would not keep). Install copies the directory less
//! `.git/`, so the installed copy starts caged; when the author's
//! `.kagedignore` leaves `vendor/` out, the case fails saying what the
//! copy lacked.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use kaged_conformance::catalogue::{LAUNCH_SELF_CONTAINED, METHODS_ANSWERS};
use kaged_conformance::report::Status::{Fail, Pass};
use kaged_conformance::report::{render_human, Report};
use kaged_conformance::{run_suite, Options};
use kaged_host_core::CageMode;
use support::{broken, options, own_fixture};

/// The fixture's files, `vendor/` with its module, a `.gitignore` naming
/// `vendor/`, a `.git/` (history install never copies) and, when given, a
/// `.kagedignore`.
fn plugin_with_gitignored_deps(kagedignore: Option<&str>) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    for entry in std::fs::read_dir(own_fixture("gitignored-deps")).expect("the fixture") {
        let entry = entry.expect("entry");
        if entry.file_type().expect("type").is_file() {
            std::fs::copy(entry.path(), dir.join(entry.file_name())).expect("copy");
        }
    }
    let write = |rel: &str, body: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, body).expect("write");
    };
    write(".gitignore", "vendor/\n__pycache__/\n");
    write(
        "vendor/greeting.py",
        "def say(name):\n    return 'hello, %s' % name\n",
    );
    write(".git/HEAD", "ref: refs/heads/main\n");
    if let Some(text) = kagedignore {
        write(".kagedignore", text);
    }
    tmp
}

/// The suite on `dir` under `--cage require`.
fn caged(dir: &Path) -> Report {
    let options = Options {
        cage: CageMode::Require,
        ..options()
    };
    run_suite(dir, &options).expect("the suite runs")
}

#[test]
fn a_gitignored_dependency_dir_is_installed_and_the_copy_starts_caged() {
    if !kaged_host_core::testing::cage_available_for_blocking("gitignored_deps_pass") {
        return;
    }
    let plugin = plugin_with_gitignored_deps(None);
    let r = caged(plugin.path());
    let case = r.case(LAUNCH_SELF_CONTAINED.id);
    assert_eq!(case.status, Pass, "{}", case.detail);
    assert!(
        case.detail
            .contains("the installed copy starts and completes the handshake"),
        "{}",
        case.detail
    );
    // The dependency is used: the method it provides answers.
    let answers = r.case(&METHODS_ANSWERS.instance_id("greeting.say"));
    assert_eq!(answers.status, Pass, "{}", answers.detail);
    assert_eq!(
        broken(&r),
        BTreeMap::new(),
        "\n{}",
        render_human(&r, false, true)
    );
}

#[test]
fn a_kagedignored_dependency_fails_the_case_naming_what_the_copy_lacked() {
    if !kaged_host_core::testing::cage_available_for_blocking("kagedignored_deps_fail") {
        return;
    }
    let plugin = plugin_with_gitignored_deps(Some("# tests only\nvendor/\n"));
    let r = caged(plugin.path());
    // In its own directory it conforms; only its installed copy does not start.
    assert_eq!(
        broken(&r),
        BTreeMap::from([(LAUNCH_SELF_CONTAINED.id.to_string(), Fail)]),
        "\n{}",
        render_human(&r, false, true)
    );
    let case = r.case(LAUNCH_SELF_CONTAINED.id);
    assert!(
        case.audit_events.iter().any(|e| e == "plugin.crashed"),
        "{:?}",
        case.audit_events
    );
    let d = &case.detail;
    for part in [
        "it exits at once (exit code 1) before answering initialize",
        "last stderr line: `ModuleNotFoundError: No module named 'greeting'`",
        "install left out: `vendor/` (.kagedignore: `vendor/`)",
    ] {
        assert!(d.contains(part), "{part:?} missing from: {d}");
    }
}
