//! `kaged-conformance init DIR`: everything a plugin in any language needs
//! to be certified in CI, written into its directory and run once:
//!
//! - `.github/workflows/kaged-conformance.yml`: the GitHub Action, caged,
//!   with the baseline and the golden transcript;
//! - `kaged-conformance.gitlab-ci.yml`: the same as a GitLab job (include
//!   it from `.gitlab-ci.yml`);
//! - `tests/scenario.yaml`: a starter session script (`ping`, and the
//!   `on_session_start` hook when the plugin declares it);
//! - `tests/scenario.golden.jsonl`: its golden transcript, from this run;
//! - `.kaged-known-failing.txt`: the baseline, the cases that fail now;
//! - `.kagedignore`, when there is none: the CI's own files
//!   ([`KIT_CACHE`], [`REPORTS`]) stay out of an install of the plugin.
//!
//! Each file that exists is left alone (and listed; a `.kagedignore` that
//! lacks the CI's entries is named with what to add); `--force` rewrites
//! the others. The CI files run as written ([`ci`]): the kit's tools pinned at
//! this version, the plugin's runtime ([`Runtime`]) installed where the
//! cage sees it.

mod ci;
mod runtime;

pub(crate) use ci::{github_tool_steps, gitlab_tool_cache, gitlab_tool_lines, indent, USERNS_LINE};
pub use ci::{gitlab_job, workflow, CiPlan, KIT_VERSION};
pub use runtime::Runtime;

use std::path::{Path, PathBuf};

use kaged_host_core::golden;
use kaged_host_core::CageMode;
use kaged_host_engine::scenario::{Scenario, Script};
use kaged_host_engine::KAGEDIGNORE_FILE as KAGEDIGNORE;
use kaged_plugin_protocol::manifest::Manifest;

use crate::cli_error::CliError;
use crate::runner::{run_suite, Options};
use crate::selection::Baseline;

/// Where the files go, relative to the plugin directory.
pub const WORKFLOW: &str = ".github/workflows/kaged-conformance.yml";
/// The GitLab job.
pub const GITLAB_JOB: &str = "kaged-conformance.gitlab-ci.yml";
/// The starter session script.
pub const SCRIPT: &str = "tests/scenario.yaml";
/// Its golden transcript.
pub const GOLDEN: &str = "tests/scenario.golden.jsonl";
/// The baseline.
pub const BASELINE: &str = ".kaged-known-failing.txt";
/// Where the written CI puts its reports (JUnit, HTML, Markdown).
pub const REPORTS: &str = "kaged-reports";
/// Where the GitLab job caches the kit's tools (GitLab caches only paths
/// inside the project).
pub const KIT_CACHE: &str = ".kaged-kit";
/// What the written `.kagedignore` leaves out of an install (each
/// written `/NAME/`).
const IGNORED: [&str; 2] = [KIT_CACHE, REPORTS];

/// `init` options.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The plugin directory (holding kaged-plugin.yaml): the root of its
    /// repository.
    pub plugin_dir: PathBuf,
    /// Rewrite files that exist (without it they are left alone).
    #[arg(long)]
    pub force: bool,
    /// How the plugin runs here: `require` (caged, or init fails), `auto`
    /// (caged where bwrap works), `off`. The written CI always requires
    /// the cage.
    #[arg(long, value_name = "MODE", default_value = "auto")]
    pub cage: CageMode,
    /// A certifier's policy file, relative to DIR (checked now): the
    /// written CI passes only when the plugin is certified under it.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

/// The starter script for the plugin of `m`.
pub fn starter_script(m: &Manifest) -> String {
    let mut text = format!(
        "# A session script for `kaged-host-sim session . --script {SCRIPT} --golden {GOLDEN}`
# (docs/any-language.md § 6 lists every key). Written by
# `kaged-conformance init`: add a step per behaviour you want pinned, then
# rewrite the golden file with --update and review its diff.
steps:
  # A daemon-level call: no `context`.
  - call: ping
"
    );
    let agent = "{operator_id: operator, project_id: demo, agent_path: primary, session_id: ses_1, request_id: req_1}";
    if m.hooks.iter().any(|h| h == "on_session_start") {
        text.push_str(&format!(
            "  # A hook: a full agent `context`.\n  - call: kaged.hook.on_session_start\n    context: {agent}\n"
        ));
    }
    if !m.tools.is_empty() {
        text.push_str("  # Its tools: their arguments as `params` (valid for the schema), an\n  # agent's `context`. Uncomment to pin what they answer; mark what\n  # changes run to run (a time, an id) with \"[any]\" or \"[re:...]\" in\n  # the golden file (docs/protocol.md § Normal-form transcripts).\n");
    }
    for tool in &m.tools {
        // Arguments that satisfy the tool's schema (its examples or
        // defaults first), so that the step runs as it is uncommented.
        let params = crate::args_from_schema(&tool.parameters_schema)
            .map_or_else(|_| "{}".to_string(), |v| v.to_string());
        text.push_str(&format!(
            "  # - call: {}.{}\n  #   params: {params}\n  #   context: {agent}\n",
            m.name, tool.name
        ));
    }
    text
}

/// Write the files, run the suite and the script once; the exit status.
pub fn init_cmd(a: &InitArgs) -> Result<i32, CliError> {
    let dir = &a.plugin_dir;
    let report = kaged_host_core::validate_dir(dir);
    let manifest = match (&report.manifest, report.has_errors()) {
        (Some(m), false) => m.clone(),
        _ => {
            return Err(CliError::Refused(format!(
                "{} holds no valid plugin: {}",
                dir.display(),
                report.render_human().trim()
            )))
        }
    };
    let policy = match &a.policy {
        Some(p) => Some((
            crate::policy::Policy::load(&dir.join(p))?,
            p.display().to_string(),
        )),
        None => None,
    };
    let runtime = Runtime::detect(dir, &manifest.command);
    let runtime_version = runtime.local_version(dir, &manifest.command);
    let plan = CiPlan {
        runtime,
        runtime_version: runtime_version.as_deref(),
        policy: policy.as_ref().map(|(_, p)| p.as_str()),
        uncaged_allowed: policy
            .as_ref()
            .is_some_and(|(p, _)| p.cage == crate::policy::CageRule::Any),
    };
    // What to write: what is missing, or everything with --force.
    let wanted = |f: &str| a.force || !dir.join(f).exists();
    let mut written = Vec::new();
    let mut kept = Vec::new();
    // The CI's cache and reports stay out of an install of the plugin: a
    // `.kagedignore` written when there is none, else named with what it
    // lacks (it is the author's: never rewritten).
    let mut ignore_lacks = Vec::new();
    match std::fs::read_to_string(dir.join(KAGEDIGNORE)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut text = "# Written by `kaged-conformance init`: what an install of this plugin\n# leaves out (gitignore syntax): the CI's cache of the kit and its reports.\n".to_string();
            for name in IGNORED {
                text.push_str(&format!("/{name}/\n"));
            }
            write(dir, KAGEDIGNORE, &text)?;
            written.push(KAGEDIGNORE);
        }
        Err(source) => {
            return Err(CliError::Io {
                what: format!("cannot read {}", dir.join(KAGEDIGNORE).display()),
                source,
            })
        }
        Ok(text) => {
            let has = |name: &str| text.lines().any(|l| l.trim().trim_matches('/') == name);
            ignore_lacks.extend(
                IGNORED
                    .into_iter()
                    .filter(|name| !has(name))
                    .map(|name| format!("/{name}/")),
            );
        }
    }
    let mut put = |file: &'static str, text: &dyn Fn() -> String| -> Result<(), CliError> {
        if wanted(file) {
            write(dir, file, &text())?;
            written.push(file);
        } else {
            kept.push(file);
        }
        Ok(())
    };
    put(WORKFLOW, &|| workflow(&plan))?;
    put(GITLAB_JOB, &|| gitlab_job(&plan))?;
    let script_text = match wanted(SCRIPT) {
        true => starter_script(&manifest),
        false => std::fs::read_to_string(dir.join(SCRIPT)).map_err(|source| CliError::Io {
            what: format!("cannot read {}", dir.join(SCRIPT).display()),
            source,
        })?,
    };
    put(SCRIPT, &|| script_text.clone())?;

    // The suite once: its failures are the baseline to start from.
    let options = Options {
        cage: a.cage,
        ..Options::default()
    };
    let suite = run_suite(dir, &options)?;
    let plugin = format!("{} {}", manifest.name, manifest.version);
    put(BASELINE, &|| {
        Baseline::render(&plugin, "kaged-conformance init", suite.failing_ids())
    })?;
    let caged = suite
        .cage_line()
        .unwrap_or_else(|| "cage: unknown".to_string());
    let s = &suite.summary;
    kaged_host_core::outln!(
        "suite: {} passed, {} failed, {} warned, {} skipped ({caged}); {} case(s) failing",
        s.passed,
        s.failed,
        s.warned,
        s.skipped,
        suite.failing_ids().len()
    );

    // The script once: its transcript is the golden file.
    let script = Script::from_yaml_str(&script_text)
        .map_err(|e| CliError::Refused(format!("{SCRIPT}: {e}")))?;
    let run = Scenario::from_script(script)
        .cage(a.cage)
        .run_blocking(dir)
        .map_err(|e| CliError::Refused(format!("the session of {SCRIPT} did not run: {e}")))?;
    let failed = run.failed_steps();
    // A golden file pins a run that passed.
    if failed.is_empty() {
        let golden = golden::update(None, &run.transcript)
            .map_err(|e| CliError::Refused(format!("{GOLDEN}: {e}")))?;
        put(GOLDEN, &|| golden.clone())?;
    }
    kaged_host_core::outln!(
        "session {SCRIPT}: {} step(s), {} failed",
        run.outcomes.len(),
        failed.len()
    );
    for f in &failed {
        kaged_host_core::outln!("  {f}");
    }
    if !failed.is_empty() {
        kaged_host_core::outln!(
            "{GOLDEN}: not written: a step failed (fix it, then `kaged-host-sim session . --script {SCRIPT} --golden {GOLDEN} --update`)"
        );
    }
    kaged_host_core::outln!(
        "the plugin's runtime: {}{} (the CI installs it where the cage sees it)",
        plan.runtime.as_str(),
        plan.runtime_version
            .map_or_else(String::new, |v| format!(" {v}, pinned"))
    );
    for f in &written {
        kaged_host_core::outln!("wrote {}", dir.join(f).display());
    }
    for f in &kept {
        kaged_host_core::outln!(
            "kept {} (it exists; --force rewrites it)",
            dir.join(f).display()
        );
    }
    if !ignore_lacks.is_empty() {
        kaged_host_core::outln!(
            "kept {} (the author's): add {} to it, so that the CI's files stay out of an install",
            dir.join(KAGEDIGNORE).display(),
            ignore_lacks.join(" and ")
        );
    }
    kaged_host_core::outln!(
        "next: review and commit them; CI then runs the suite and the golden check on every push"
    );
    Ok(i32::from(!failed.is_empty()))
}

fn io(dir: &Path, file: &str, source: std::io::Error) -> CliError {
    CliError::Io {
        what: format!("cannot write {}", dir.join(file).display()),
        source,
    }
}

fn write(dir: &Path, file: &str, text: &str) -> Result<(), CliError> {
    let path = dir.join(file);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| io(dir, file, source))?;
    }
    std::fs::write(&path, text).map_err(|source| io(dir, file, source))
}
