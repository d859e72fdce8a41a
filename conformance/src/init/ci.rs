//! The CI files `init` writes, which run as written: no placeholder, the
//! kit's tools at the version `init` itself is (cargo-binstall's release
//! archives, falling back to `cargo install --locked`, cached by version),
//! the plugin's runtime installed where the cage sees it ([`Runtime`]),
//! bubblewrap for the cage. The GitHub workflow uses the kit's action when
//! the kit's home is a real repository ([`crate::home::is_real`]), and the
//! same steps inline otherwise.

use super::runtime::Runtime;
use super::{BASELINE, GOLDEN, KIT_CACHE, REPORTS, SCRIPT};
use crate::home;

/// The kit version the written CI installs: this build's.
pub const KIT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What the written CI is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CiPlan<'a> {
    /// The plugin's runtime.
    pub runtime: Runtime,
    /// Its version to install, when `init` pins one (bun's, found here).
    pub runtime_version: Option<&'a str>,
    /// A certifier's policy file in the repository.
    pub policy: Option<&'a str>,
    /// Whether the policy accepts an uncaged run (`cage: any`): the GitLab
    /// job then runs `--cage auto` on a runner that cannot cage.
    pub uncaged_allowed: bool,
}

/// The shell lines that install `kaged-conformance` and `kaged-host-sim`
/// at [`KIT_VERSION`] under `$root` (a shell expression) unless they are
/// there already (a cache hit).
pub(crate) fn install_tools(root: &str) -> String {
    format!(
        r#"v="{KIT_VERSION}"; root="{root}"
if ! "$root/bin/kaged-conformance" --version 2>/dev/null | grep -qF " $v"; then
  command -v cargo-binstall >/dev/null || curl -fsSL --proto '=https' --tlsv1.2 https://raw.githubusercontent.com/cargo-bins/cargo-binstall/main/install-from-binstall-release.sh | bash || true
  cargo binstall -y --root "$root" "kaged-conformance@$v" "kaged-host-sim@$v" || cargo install --locked --root "$root" "kaged-conformance@$v" "kaged-host-sim@$v"
fi"#
    )
}

/// The lines that install bubblewrap and the runtime (as root: `sudo`
/// before each when `sudo` is given).
fn system_lines(runtime: Runtime, version: Option<&str>, sudo: &str) -> Vec<String> {
    let mut packages = vec!["bubblewrap"];
    packages.extend(runtime.packages());
    let mut lines = vec![
        format!("{sudo}apt-get update -qq"),
        format!("{sudo}apt-get install -y -qq {}", packages.join(" ")),
    ];
    for line in runtime.install_lines(version) {
        lines.push(match sudo {
            "" => line,
            s => format!("{s}bash -c '{}'", line.replace('\'', r"'\''")),
        });
    }
    lines
}

/// `text`, each line indented by `by` spaces (a YAML block scalar's body).
pub(crate) fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.lines()
        .map(|l| format!("{pad}{l}\n"))
        .collect::<String>()
}

/// The run line that lets Ubuntu 24.04 runners give bubblewrap the
/// unprivileged user namespaces it needs.
pub(crate) const USERNS_LINE: &str =
    "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 || true";

/// A GitHub job's steps that restore the kit's tools from the cache (by
/// version) or install them, and put them on `PATH`.
pub(crate) fn github_tool_steps() -> String {
    let install = indent(&install_tools(&format!("$HOME/{KIT_CACHE}")), 10);
    format!(
        "      - name: cache the kit's tools (by version)
        uses: actions/cache@v4
        with:
          path: ~/{KIT_CACHE}
          key: kaged-kit-{KIT_VERSION}-${{{{ runner.os }}}}
      - name: install kaged-conformance and kaged-host-sim {KIT_VERSION}
        run: |
{install}          echo \"$HOME/{KIT_CACHE}/bin\" >> \"$GITHUB_PATH\"
"
    )
}

/// A GitLab job's cache of the kit's tools (by version).
pub(crate) fn gitlab_tool_cache() -> String {
    format!("  cache:\n    key: kaged-kit-{KIT_VERSION}\n    paths: [{KIT_CACHE}/]\n")
}

/// A GitLab job's `before_script` items that install the kit's tools
/// (unless cached) and put them on `PATH`.
pub(crate) fn gitlab_tool_lines() -> String {
    let install = indent(&install_tools(&format!("$CI_PROJECT_DIR/{KIT_CACHE}")), 6);
    format!("    - |\n{install}    - export PATH=\"$CI_PROJECT_DIR/{KIT_CACHE}/bin:$PATH\"\n")
}

/// The suite's command line.
fn run_line(plan: &CiPlan<'_>, cage: &str, reports: &str) -> String {
    let policy = plan
        .policy
        .map_or_else(String::new, |p| format!(" --policy {p}"));
    format!("kaged-conformance run . --cage {cage} --known-failing {BASELINE}{policy}{reports}")
}

/// The golden check's command line.
fn golden_line(cage: &str) -> String {
    format!("kaged-host-sim session . --cage {cage} --script {SCRIPT} --golden {GOLDEN}")
}

/// The GitHub workflow.
pub fn workflow(plan: &CiPlan<'_>) -> String {
    let runtime = plan.runtime;
    let system = indent(
        &system_lines(runtime, plan.runtime_version, "sudo ").join("\n"),
        10,
    );
    let head = format!(
        "# Written by `kaged-conformance init` (kit {KIT_VERSION}): certify this plugin
# on every push and pull request, caged as the daemon runs it, against the
# baseline of cases known to fail ({BASELINE}), and check its golden
# transcript. The plugin's runtime ({}) is installed where the cage sees it.
# A plugin that needs building: add that step before the suite.
name: kaged conformance
on: [push, pull_request]
jobs:
  conformance:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: bubblewrap and the plugin's runtime, where the cage sees them
        run: |
{system}          # Ubuntu 24.04 keeps unprivileged user namespaces from bubblewrap.
          {USERNS_LINE}
",
        runtime.as_str()
    );
    if home::is_real() {
        let policy = plan
            .policy
            .map_or_else(String::new, |p| format!("          policy: {p}\n"));
        return format!(
            "{head}      - uses: {}
        with:
          plugin-dir: .
          version: \"{KIT_VERSION}\"
          cage: require
          known-failing: {BASELINE}
          golden: {GOLDEN}
{policy}",
            home::action_ref()
        );
    }
    let reports = format!(" --report junit={REPORTS}/conformance.xml --report html={REPORTS}/conformance.html --report markdown={REPORTS}/conformance.md");
    format!(
        "{head}{tools}      - name: certify
        run: {run}
      - name: summary
        if: always()
        run: cat {REPORTS}/conformance.md >> \"$GITHUB_STEP_SUMMARY\" || true
      - name: golden transcript
        run: {golden}
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: kaged-conformance
          path: {REPORTS}/
",
        tools = github_tool_steps(),
        run = run_line(plan, "require", &reports),
        golden = golden_line("require"),
    )
}

/// The GitLab job (include it from `.gitlab-ci.yml`).
pub fn gitlab_job(plan: &CiPlan<'_>) -> String {
    let include = super::GITLAB_JOB;
    let cage = if plan.uncaged_allowed {
        "auto"
    } else {
        "require"
    };
    let runner = if plan.uncaged_allowed {
        "# The policy accepts an uncaged run (`cage: any`): on a runner that cannot
# cage, the suite runs uncaged and every report says `cage: unavailable`."
    } else {
        "# The cage (bubblewrap) needs user namespaces: a runner whose Docker
# executor is privileged, or runs containers with unprivileged user
# namespaces allowed. Elsewhere the suite refuses to run (`--cage require`)."
    };
    let system = indent(
        &system_lines(plan.runtime, plan.runtime_version, "").join("\n"),
        6,
    );
    let reports = format!(
        " --report junit={REPORTS}/conformance.xml --report html={REPORTS}/conformance.html"
    );
    format!(
        "# Written by `kaged-conformance init` (kit {KIT_VERSION}). Include it from .gitlab-ci.yml:
#   include: [{{local: {include}}}]
{runner}
kaged-conformance:
  image: rust:1-bookworm
{cache}  before_script:
    - |
{system}{tools}  script:
    - {run}
    - {golden}
  artifacts:
    when: always
    paths: [{REPORTS}/]
    reports:
      junit: {REPORTS}/conformance.xml
",
        cache = gitlab_tool_cache(),
        tools = gitlab_tool_lines(),
        run = run_line(plan, cage, &reports),
        golden = golden_line(cage),
    )
}
