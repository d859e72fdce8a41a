//! A registry as a CI matrix: the JSON a GitHub `strategy.matrix` takes,
//! a GitLab child pipeline with `parallel:matrix`, and a GitHub workflow
//! that plans the matrix, certifies each plugin in its own job under its
//! policy (a JSON report and an attestation each, uploaded), then merges
//! the reports into one page ([`super::merge`]). The distributed engine is
//! the CI's own: one job per plugin, as many at once as it runs.

use serde_json::{json, Value};

use super::file::{Entry, Registry, Source};
use crate::init::{
    github_tool_steps, gitlab_tool_cache, gitlab_tool_lines, indent, KIT_VERSION, USERNS_LINE,
};

/// One matrix row: every value a string (empty when absent), so a
/// workflow's expressions need no checks.
fn row(registry: &Registry, e: &Entry) -> Value {
    let under = |p: &str| registry.base.join(p).display().to_string();
    let (dir, git, git_ref) = match &e.source {
        Source::Dir(d) => (under(d), String::new(), String::new()),
        Source::Git { url, git_ref } => (
            String::new(),
            url.clone(),
            git_ref.clone().unwrap_or_default(),
        ),
    };
    json!({
        "key": e.key(),
        "name": e.name,
        "version": e.version,
        "dir": dir,
        "git": git,
        "ref": git_ref,
        "policy": e.policy.as_deref().map(under).unwrap_or_default(),
    })
}

/// `{"include": [...]}`, one row per plugin, on one line: what
/// `strategy.matrix: ${{ fromJSON(...) }}` takes.
pub fn github_matrix(registry: &Registry) -> String {
    let rows: Vec<Value> = registry.plugins.iter().map(|e| row(registry, e)).collect();
    json!({ "include": rows }).to_string()
}

/// A YAML double-quoted string.
fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The lines that fetch the plugin of the current job into `$PLUGIN_DIR`
/// (`$DIR`, or a shallow clone of `$GIT` at `$REF`), then certify it under
/// `$POLICY` with a JSON report and an attestation in `reports/`.
const CERTIFY: &str = r#"mkdir -p reports
if [ -n "$GIT" ]; then
  git clone --quiet --depth 1 ${REF:+--branch "$REF"} -- "$GIT" "plugin-$KEY"
  PLUGIN_DIR="plugin-$KEY"
else
  PLUGIN_DIR="$DIR"
fi
status=0
kaged-conformance run "$PLUGIN_DIR" --cage require ${POLICY:+--policy "$POLICY"} \
  --report json="reports/$KEY.json" --report junit="reports/$KEY.xml" \
  --attest "reports/$KEY.intoto.json" || status=$?
# 0: certified or passing, 1: not; 2: the run itself failed (no report).
[ "$status" -le 1 ]"#;

/// The system packages every job installs: the cage, and the runtimes
/// plugins of a registry are commonly written for.
const SYSTEM: &str =
    "apt-get update -qq && apt-get install -y -qq bubblewrap nodejs python3 jq git";

/// A GitLab child pipeline: one `kaged-certify` job per plugin
/// (`parallel:matrix`), each leaving `reports/KEY.{json,xml,intoto.json}`.
pub fn gitlab_pipeline(registry: &Registry) -> String {
    let mut rows = String::new();
    for e in &registry.plugins {
        let r = row(registry, e);
        let s = |k: &str| q(r[k].as_str().unwrap_or_default());
        rows.push_str(&format!(
            "      - KEY: {}\n        DIR: {}\n        GIT: {}\n        REF: {}\n        POLICY: {}\n",
            s("key"),
            s("dir"),
            s("git"),
            s("ref"),
            s("policy"),
        ));
    }
    format!(
        "# Written by `kaged-conformance matrix REGISTRY --format gitlab` (kit {KIT_VERSION}):
# one job per plugin of the registry, each certified caged under its policy
# (the runner must be able to cage: a privileged executor, or user
# namespaces). Run it as a child pipeline (trigger: include: artifact).
kaged-certify:
  image: rust:1-bookworm
{cache}  parallel:
    matrix:
{rows}  before_script:
    - {SYSTEM}
{tools}  script:
    - |
{certify}  artifacts:
    when: always
    paths: [reports/]
    reports:
      junit: reports/*.xml
",
        cache = gitlab_tool_cache(),
        tools = gitlab_tool_lines(),
        certify = indent(CERTIFY, 6),
    )
}

/// The GitHub workflow certifying the registry at `registry_path` (as the
/// repository names it): `plan` (the matrix), `certify` (one job per
/// plugin), `merge` (the page, the job summary, the badges' index).
pub fn github_workflow(registry_path: &str) -> String {
    let steps = format!("      - uses: actions/checkout@v4\n{}", github_tool_steps());
    format!(
        "# Written by `kaged-conformance matrix {registry_path} --workflow FILE` (kit
# {KIT_VERSION}): certify every plugin of the registry, one job each under its
# policy, caged; then merge the reports into one page (regressions first).
name: kaged registry
on: [push, workflow_dispatch]
jobs:
  plan:
    runs-on: ubuntu-latest
    outputs:
      matrix: ${{{{ steps.matrix.outputs.matrix }}}}
    steps:
{steps}      - id: matrix
        run: echo \"matrix=$(kaged-conformance matrix {registry_path} --format github)\" >> \"$GITHUB_OUTPUT\"
  certify:
    needs: plan
    runs-on: ubuntu-latest
    strategy:
      fail-fast: false
      matrix: ${{{{ fromJSON(needs.plan.outputs.matrix) }}}}
    steps:
{steps}      - name: bubblewrap and the runtimes, where the cage sees them
        run: |
          sudo bash -c '{SYSTEM}'
          {USERNS_LINE}
      - name: certify ${{{{ matrix.name }}}} ${{{{ matrix.version }}}}
        env:
          KEY: ${{{{ matrix.key }}}}
          DIR: ${{{{ matrix.dir }}}}
          GIT: ${{{{ matrix.git }}}}
          REF: ${{{{ matrix.ref }}}}
          POLICY: ${{{{ matrix.policy }}}}
        run: |
{certify}      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: report-${{{{ matrix.key }}}}
          path: reports/
  merge:
    needs: certify
    if: always()
    runs-on: ubuntu-latest
    steps:
{steps}      - uses: actions/download-artifact@v4
        with:
          pattern: report-*
          merge-multiple: true
          path: reports
      - name: the registry page
        run: |
          kaged-conformance merge reports/*.json --out site
          cat site/index.md >> \"$GITHUB_STEP_SUMMARY\"
      - uses: actions/upload-artifact@v4
        with:
          name: registry-page
          path: site/
",
        certify = indent(CERTIFY, 10),
    )
}
