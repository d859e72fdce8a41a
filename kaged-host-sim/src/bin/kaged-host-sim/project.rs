//! `kaged-host-sim session --project FILE (--plugins DIR | --plugin PKG=DIR...)
//! [--local FILE] --script FILE [--json]`: a scenario against a whole
//! project, through [`AgentHost`].
//!
//! The script is a [`ProjectScript`] (`start_session`, `idle`, `compact`
//! and `expect_audit` steps on agent paths; [`kaged_host_engine::scenario`]
//! documents the format), run by [`run_project_steps`].
//!
//! `call`, `notify` and `wait` steps need a single plugin (`session DIR`).
//! First, one `NAME: cage: ...` line per running plugin (how it runs);
//! each step prints one line, or with `--json` one JSON object (the
//! outcome's JSON, plus `index`, `ok` and `failure`); the last line is the
//! summary (`{"summary": {..., "cage": {NAME: {"cage": "bwrap", ...}}}}`
//! with `--json`). Exit 1 when a step failed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{json, Value};

use super::{one_line, CliError};
use kaged_host_core::HostSim;
use kaged_host_engine::scenario::{run_project_steps, ProjectScript};
use kaged_host_engine::{AgentHost, PluginDirs};

/// The project-mode options of `session`.
#[derive(Debug, Clone)]
pub(super) struct ProjectArgs {
    pub(super) project: PathBuf,
    pub(super) plugins: Option<PathBuf>,
    pub(super) plugin: Vec<String>,
    pub(super) local: Option<PathBuf>,
    pub(super) json: bool,
}

fn plugin_dirs(args: &ProjectArgs) -> Result<PluginDirs, CliError> {
    match (&args.plugins, args.plugin.is_empty()) {
        (Some(dir), true) => Ok(PluginDirs::Root(dir.clone())),
        (None, false) => {
            let mut map = BTreeMap::new();
            for entry in &args.plugin {
                let Some((package, dir)) = entry.split_once('=') else {
                    return Err(CliError::Usage(format!(
                        "--plugin {entry:?} must be PACKAGE=DIR"
                    )));
                };
                map.insert(package.to_string(), PathBuf::from(dir));
            }
            Ok(PluginDirs::Map(map))
        }
        _ => Err(CliError::Usage(
            "--project needs exactly one of --plugins DIR or --plugin PACKAGE=DIR (repeatable)"
                .to_string(),
        )),
    }
}

pub(super) async fn run(
    host: &HostSim,
    args: &ProjectArgs,
    script: &Path,
) -> Result<ExitCode, CliError> {
    if !args.project.is_file() {
        return Err(CliError::Usage(format!(
            "no such project file: {}",
            args.project.display()
        )));
    }
    let dirs = plugin_dirs(args)?;
    let listed: Vec<&PathBuf> = match &dirs {
        PluginDirs::Root(d) => vec![d],
        PluginDirs::Map(m) => m.values().collect(),
    };
    if let Some(missing) = listed.into_iter().find(|d| !d.is_dir()) {
        return Err(CliError::Usage(format!(
            "no such plugin directory: {}",
            missing.display()
        )));
    }
    let script = super::script::load(script, ProjectScript::from_yaml_str)?;
    let agents = AgentHost::from_files(host.clone(), &args.project, &dirs, args.local.as_deref())
        .await
        .map_err(|e| {
            CliError::Failed(one_line(
                &format!("cannot start project {}", args.project.display()),
                &e,
            ))
        })?;
    // A plugin that cannot launch does not block the others (spec Spawn);
    // say so where a person reads it, not only in the audit log.
    for failed in agents.failed() {
        eprintln!(
            "kaged-host-sim: warning: {}",
            one_line(
                &format!(
                    "plugin {} ({}) failed to launch; its hooks are not fired",
                    failed.name,
                    failed.dir.display()
                ),
                &failed.error
            )
        );
    }
    let cages: BTreeMap<String, Value> = agents
        .plugins_running()
        .map(|s| (s.name().to_string(), json!(s.cage())))
        .collect();
    if !args.json {
        for s in agents.plugins_running() {
            kaged_host_core::outln!("{}", super::caging::line(s, Some(s.name())));
        }
    }
    let json = args.json;
    let outcomes = run_project_steps(&agents, &script, &mut |i, o| {
        if json {
            kaged_host_core::outln!("{}", o.to_json(i));
        } else {
            let mark = if o.ok() { "ok  " } else { "FAIL" };
            kaged_host_core::outln!("step {i}: {mark} {}", o.line());
        }
    })
    .await;
    let failures = outcomes.iter().filter(|o| !o.ok()).count();
    let shutdown: Vec<(String, String)> = agents
        .shutdown()
        .await
        .into_iter()
        .map(|(name, o)| (name, o.to_string()))
        .collect();
    let total = script.steps.len();
    if args.json {
        let shutdown: BTreeMap<_, _> = shutdown.into_iter().collect();
        kaged_host_core::outln!(
            "{}",
            json!({"summary": {"steps": total, "failed": failures, "shutdown": shutdown, "cage": cages}})
        );
    } else {
        for (name, o) in shutdown {
            kaged_host_core::outln!("shutdown {name}: {o}");
        }
        kaged_host_core::outln!("{total} step(s), {failures} failed");
    }
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
