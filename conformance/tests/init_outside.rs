//! `kaged-conformance init DIR` on plugins written outside the kit
//! (`tests/fixtures/outside/README.md`): authors who read only the docs,
//! each plugin in its own layout (a Python package run with `python3 -m`,
//! TypeScript on bun under `src/`, ES modules on Node.js under `src/`). On a copy of
//! each: the files are written with no placeholder and the kit pinned
//! and pass actionlint and the GitLab CI schema,
//! every step of the workflow and the GitLab job runs here as the CI
//! would, and certifies the plugin caged; the starter script's tool steps,
//! uncommented, run.

mod support;

use std::path::Path;

use kaged_test_support::command::assert_success;
use support::ci_steps::{bun, init_and_run_the_ci, lint_clean};
use support::outside_fixture;

/// The starter script with its tool steps uncommented runs: each step's
/// arguments satisfy the tool's schema.
fn tool_steps_run(dir: &Path) {
    let script = dir.join("tests/scenario.yaml");
    let text = std::fs::read_to_string(&script).expect("script");
    assert!(text.contains("  # - call: "), "tool steps: {text}");
    let open: String = text
        .lines()
        .map(|l| {
            if let Some(rest) = l.strip_prefix("  # - call: ") {
                format!("  - call: {rest}\n")
            } else if let Some(rest) = l.strip_prefix("  #   ") {
                format!("    {rest}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let uncommented = dir.join("tests/tools.yaml");
    std::fs::write(&uncommented, open).expect("write");
    let Some(host_sim) = support::kit_binary("kaged-host-sim") else {
        return;
    };
    let out = std::process::Command::new(host_sim)
        .args(["--cage", support::ci_steps::cage(), "session"])
        .arg(dir)
        .arg("--script")
        .arg(&uncommented)
        .output()
        .expect("session");
    assert_success("the starter script's tool steps", &out);
    let _ = std::fs::remove_file(uncommented);
}

#[test]
fn init_writes_ci_that_runs_as_written_for_a_python_package_from_outside() {
    let (_tmp, dir) = outside_fixture("py-tally");
    // The author's own `.kagedignore`: kept, what it lacks named.
    let before = std::fs::read_to_string(dir.join(".kagedignore")).expect("theirs");
    init_and_run_the_ci(&dir, "python3");
    lint_clean(&dir);
    assert_eq!(
        std::fs::read_to_string(dir.join(".kagedignore")).expect("read"),
        before
    );
    tool_steps_run(&dir);
}

#[test]
fn init_writes_ci_that_runs_as_written_for_a_bun_project_from_outside() {
    let Some(_) = kaged_test_support::ci::required_in_ci("bun", bun()) else {
        return;
    };
    let (_tmp, dir) = outside_fixture("bun-timebox");
    init_and_run_the_ci(&dir, "curl unzip ca-certificates");
    lint_clean(&dir);
    let workflow = std::fs::read_to_string(dir.join(".github/workflows/kaged-conformance.yml"))
        .expect("workflow");
    assert!(workflow.contains("bash -s bun-v"), "bun pinned: {workflow}");
    tool_steps_run(&dir);
}

#[test]
fn init_writes_ci_that_runs_as_written_for_node_es_modules_from_outside() {
    let (_tmp, dir) = outside_fixture("node-bookmarks");
    init_and_run_the_ci(&dir, "nodejs");
    lint_clean(&dir);
    tool_steps_run(&dir);
}
