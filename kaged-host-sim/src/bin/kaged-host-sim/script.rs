//! `kaged-host-sim session DIR --script FILE`: a YAML scenario
//! ([`kaged_host_engine::scenario`] documents the format). The first line
//! says how the plugin runs (`cage: bwrap (...)`, or uncaged and why);
//! every step prints one line; the exit status is 1 when any expectation
//! failed. A call without `expect` only has to succeed.
//!
//! With `--project`, steps are `start_session`, `idle`, `compact` and
//! `expect_audit` on agent paths instead (see the `project` module and
//! [`kaged_host_engine::scenario::ProjectScript`]).

use std::path::Path;
use std::process::ExitCode;

use kaged_host_core::HostSim;
use kaged_host_engine::scenario::{run_steps, Script, ScriptError};

use super::{one_line, CliError};

/// Read the script at `path` and parse it with `parse`.
pub fn load<S>(
    path: &Path,
    parse: impl FnOnce(&str) -> Result<S, ScriptError>,
) -> Result<S, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::Usage(one_line(
            &format!("cannot read script {}", path.display()),
            &e,
        ))
    })?;
    parse(&text).map_err(|e| CliError::Usage(one_line(&format!("script {}", path.display()), &e)))
}

pub(super) async fn run(host: &HostSim, dir: &Path, script: &Path) -> Result<ExitCode, CliError> {
    let script = load(script, Script::from_yaml_str)?;
    let plugin = host.launch_with(dir, &script.config).await.map_err(|e| {
        CliError::Failed(one_line(
            &format!("cannot start the plugin in {}", dir.display()),
            &e,
        ))
    })?;
    kaged_host_core::outln!("{}", super::caging::line(&plugin, None));
    if let Some(sent) = plugin.first_config() {
        kaged_host_core::outln!("{}", first_config_line(&sent));
    }
    let outcomes = run_steps(host, &plugin, &script, &mut |i, o| {
        let mark = if o.ok { "ok  " } else { "FAIL" };
        kaged_host_core::outln!("step {i}: {mark} {}", o.line);
    })
    .await;
    let failures = outcomes.iter().filter(|o| !o.ok).count();
    let outcome = plugin.shutdown().await;
    kaged_host_core::outln!("shutdown: {outcome}");
    kaged_host_core::outln!("{} step(s), {failures} failed", script.steps.len());
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// How the first `config.update` went, in one line: what the daemon sends
/// right after `initialized` (a script's `config` sets it, `off` skips it).
pub fn first_config_line(sent: &kaged_host_core::FirstConfigSent) -> String {
    let config = serde_json::Value::Object(sent.config.clone());
    match &sent.refused {
        None => format!("config: {config} sent after initialized, accepted"),
        Some(why) => format!(
            "config: {config} sent after initialized, REFUSED ({why}); the plugin runs on its defaults, as in the daemon"
        ),
    }
}
