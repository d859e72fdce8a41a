//! `kaged-host-sim session --project FILE (--plugins DIR | --plugin PKG=DIR...)
//! [--local FILE] --script FILE [--json]`: a scenario against a whole
//! project, through [`AgentHost`].
//!
//! ```yaml
//! steps:
//!   - start_session: primary          # on_session_start
//!     session_id: ses_1               # every project step; default "ses_1"
//!     expect: {result: {injects: [{plugin: memory}]}}   # subset of the JSON outcome
//!   - idle: primary                   # on_session_idle
//!     transcript: [{id: u1, role: user, content: hi}]
//!   - compact: primary.subagents.researcher
//!     messages_being_compacted: [{id: m1, role: user, content: old}]
//!     messages_remaining: [{id: m2, role: user, content: new}]
//!     strategy: summarize             # default drop
//!     trigger: threshold_crossed      # default
//!     expect: {result: {fallback: false}}
//!   - expect_audit: compaction.completed
//!     data: {strategy: compactor}
//! ```
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
use kaged_host_sim::scenario::{subset, Script, Step};
use kaged_host_sim::{AgentHost, AgentHostError, AuditEvent, CompactRequest, HostSim, PluginDirs};

/// The session id of project steps without `session_id`.
pub const DEFAULT_SESSION: &str = "ses_1";

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

fn load_script(path: &Path) -> Result<Script, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::Usage(one_line(
            &format!("cannot read script {}", path.display()),
            &e,
        ))
    })?;
    let script = Script::from_yaml_str(&text)
        .map_err(|e| CliError::Usage(one_line(&format!("script {}", path.display()), &e)))?;
    for (i, step) in script.steps.iter().enumerate() {
        let project = [
            &step.start_session,
            &step.idle,
            &step.compact,
            &step.expect_audit,
        ];
        let single = [&step.call, &step.notify, &step.wait];
        let n = project.iter().filter(|a| a.is_some()).count();
        if single.iter().any(|a| a.is_some()) || step.calls.is_some() || n != 1 {
            return Err(CliError::Usage(format!(
                "invalid script: with --project, step {} needs exactly one of start_session, idle, compact, expect_audit",
                i + 1
            )));
        }
    }
    Ok(script)
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
    let script = load_script(script)?;
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
        .sessions()
        .map(|s| (s.name().to_string(), json!(s.cage())))
        .collect();
    if !args.json {
        for s in agents.sessions() {
            println!("{}", super::caging::line(s, Some(s.name())));
        }
    }
    let mut failures = 0;
    for (i, step) in script.steps.iter().enumerate() {
        agents.host().config().transcript.mark_step();
        let (outcome, failure) = run_step(&agents, step).await;
        if failure.is_some() {
            failures += 1;
        }
        if args.json {
            let mut v = outcome;
            v["index"] = json!(i + 1);
            v["ok"] = json!(failure.is_none());
            v["failure"] = json!(failure);
            println!("{v}");
        } else {
            let mark = if failure.is_none() { "ok  " } else { "FAIL" };
            let line = failure.unwrap_or_else(|| describe(&outcome));
            println!("step {}: {mark} {line}", i + 1);
        }
    }
    agents.host().config().transcript.mark_step();
    let shutdown: Vec<(String, String)> = agents
        .shutdown()
        .await
        .into_iter()
        .map(|(name, o)| (name, o.to_string()))
        .collect();
    let total = script.steps.len();
    if args.json {
        let shutdown: BTreeMap<_, _> = shutdown.into_iter().collect();
        println!(
            "{}",
            json!({"summary": {"steps": total, "failed": failures, "shutdown": shutdown, "cage": cages}})
        );
    } else {
        for (name, o) in shutdown {
            println!("shutdown {name}: {o}");
        }
        println!("{total} step(s), {failures} failed");
    }
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// One human line for a successful step.
fn describe(v: &Value) -> String {
    let path = v["agent_path"].as_str().unwrap_or_default();
    let len = |k: &str| v[k].as_array().map_or(0, Vec::len);
    match v["step"].as_str().unwrap_or_default() {
        "start_session" => format!(
            "start_session {path} -> {} inject(s): {}",
            len("injects"),
            v["system_prompt_prefix"]
        ),
        "idle" => format!("idle {path} -> fired {}", v["fired"]),
        "compact" => format!(
            "compact {path} -> {} message(s), superseded {}, applied {}, fallback {}, {} retained, {} inject(s)",
            len("messages"),
            v["superseded"],
            v["applied"].as_str().unwrap_or_default(),
            v["fallback"],
            len("retained"),
            len("injects")
        ),
        other => format!("{other} {}", v["event"].as_str().unwrap_or_default()),
    }
}

/// Run one step: its JSON outcome and, when it failed, why.
async fn run_step(agents: &AgentHost, step: &Step) -> (Value, Option<String>) {
    let session = step.session_id.as_deref().unwrap_or(DEFAULT_SESSION);
    let r: Result<Value, AgentHostError> = if let Some(path) = &step.start_session {
        agents
            .start_session(path, session)
            .await
            .map(|o| o.to_json())
    } else if let Some(path) = &step.idle {
        let transcript = step.transcript.clone().unwrap_or_default();
        agents
            .idle(path, session, transcript)
            .await
            .map(|o| o.to_json())
    } else if let Some(path) = &step.compact {
        let mut req = CompactRequest::new(
            session,
            step.messages_being_compacted.clone().unwrap_or_default(),
            step.messages_remaining.clone().unwrap_or_default(),
        );
        if let Some(s) = &step.strategy {
            req = req.strategy(s);
        }
        if let Some(t) = &step.trigger {
            req = req.trigger(t);
        }
        agents.compact(path, req).await.map(|o| o.to_json())
    } else if let Some(name) = &step.expect_audit {
        return expect_audit(agents, name, step.data.as_ref());
    } else {
        return (json!({"step": "empty"}), Some("empty step".to_string()));
    };
    match r {
        Err(e) => (
            json!({"step": "error", "error": e.to_string()}),
            Some(one_line("step failed", &e)),
        ),
        Ok(v) => match step.expect.as_ref().and_then(|e| e.result.as_ref()) {
            Some(want) if !subset(want, &v) => {
                let failure = format!("{}: expected {want}", describe(&v));
                (v, Some(failure))
            }
            _ => (v, None),
        },
    }
}

fn expect_audit(agents: &AgentHost, name: &str, data: Option<&Value>) -> (Value, Option<String>) {
    let v = json!({"step": "expect_audit", "event": name});
    let Some(event) = AuditEvent::parse(name) else {
        return (v, Some(format!("expect_audit {name}: no such audit event")));
    };
    let want = data.cloned().unwrap_or_else(|| json!({}));
    let hit = agents
        .audit()
        .of(event)
        .into_iter()
        .any(|r| subset(&want, &Value::Object(r.data.clone())));
    match hit {
        true => (v, None),
        false => (
            v,
            Some(format!("expect_audit {name}: not emitted (with {want})")),
        ),
    }
}
