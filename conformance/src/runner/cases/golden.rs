//! `golden.transcripts`: the plugin's own golden transcripts match what it
//! does now. Each `tests/NAME.golden.jsonl` in the plugin directory is
//! checked against a run of the session script beside it,
//! `tests/NAME.yaml`, on a fresh host, caged and scaled as the run is,
//! exactly as `kaged-host-sim session --script S --golden G` compares them,
//! with the run's timeouts (`Options::adjust_timeouts` included).
//! Without a golden transcript the case skips; a golden file without its
//! script, or a script `session` cannot run alone (a `--project` script),
//! is named.

use std::path::{Path, PathBuf};

use kaged_host_core::golden::{self, Golden};
use kaged_host_engine::scenario::{Scenario, Script};
use kaged_plugin_protocol::error_chain::chain;
use kaged_plugin_protocol::text::cut;

use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::Target;
use crate::runner::session::context::RunContext;
use crate::runner::session::processes::LaneProcesses;

/// Where a plugin keeps its golden transcripts, and their file suffix.
const DIR: &str = "tests";
const SUFFIX: &str = ".golden.jsonl";
/// How much of a difference a failure quotes.
const DIFF_CHARS: usize = 600;

/// The golden files in `dir/tests`, sorted, each with its script path.
pub(crate) fn goldens(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir.join(DIR)) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let stem = name.strip_suffix(SUFFIX)?;
            let golden = e.path();
            golden
                .is_file()
                .then(|| (golden.clone(), dir.join(DIR).join(format!("{stem}.yaml"))))
        })
        .collect();
    out.sort();
    out
}

/// One golden file against a run of its script: `Ok` when the same, the
/// problem otherwise.
async fn check(ctx: &RunContext, golden_file: &Path, script: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(script)
        .map_err(|e| format!("its script {} cannot be read: {e}", script.display()))?;
    let script = Script::from_yaml_str(&text).map_err(|e| {
        format!(
            "its script {} is not a single-plugin session script: {e}",
            script.display()
        )
    })?;
    let old = std::fs::read_to_string(golden_file).map_err(|e| format!("cannot be read: {e}"))?;
    let run = Scenario::from_script(script)
        .cage(ctx.options.cage)
        .time_scale(ctx.options.time_scale)
        .adjust_timeouts(ctx.options.adjust_timeouts)
        .run(&ctx.dir)
        .await
        .map_err(|e| format!("its session did not run: {}", chain(&e)))?;
    let failed = run.failed_steps();
    if !failed.is_empty() {
        return Err(format!(
            "{} step(s) failed: {}",
            failed.len(),
            cut(&failed.join("; "), DIFF_CHARS)
        ));
    }
    match golden::compare(&old, &run.transcript) {
        Err(e) => Err(format!("is not a golden file: {e}")),
        Ok(Golden::Same) => Ok(()),
        Ok(Golden::Differs { diff }) => Err(format!("differs: {}", cut(diff.trim(), DIFF_CHARS))),
    }
}

/// `golden.transcripts`.
pub(crate) async fn transcripts(
    ctx: &RunContext,
    _: &mut LaneProcesses,
    _: &mut Scope,
    _: &Target,
) -> Verdict {
    let found = goldens(&ctx.dir);
    if found.is_empty() {
        return Verdict::skip(format!(
            "no {DIR}/*{SUFFIX} in the plugin directory: nothing pinned (kaged-conformance init writes one)"
        ));
    }
    let rel = |p: &Path| p.strip_prefix(&ctx.dir).unwrap_or(p).display().to_string();
    let mut same = Vec::new();
    let mut bad = Vec::new();
    for (golden_file, script) in &found {
        if !script.is_file() {
            bad.push(format!(
                "{}: no session script {} beside it",
                rel(golden_file),
                rel(script)
            ));
            continue;
        }
        match check(ctx, golden_file, script).await {
            Ok(()) => same.push(rel(golden_file)),
            Err(why) => bad.push(format!("{}: {why}", rel(golden_file))),
        }
    }
    if bad.is_empty() {
        return Verdict::pass(format!(
            "{} golden transcript(s) match: {}",
            same.len(),
            same.join(", ")
        ));
    }
    Verdict::fail(format!(
        "expected: each golden transcript matches a run of its script; actual: {}; \
         if the change is meant, accept it: `kaged-host-sim session . --script S --golden G --update` and review the diff",
        bad.join("; ")
    ))
}
