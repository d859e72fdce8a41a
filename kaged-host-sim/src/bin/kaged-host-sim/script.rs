//! `kaged-host-sim session DIR --script FILE`: a YAML scenario
//! ([`kaged_host_sim::scenario`] documents the format). The first line
//! says how the plugin runs (`cage: bwrap (...)`, or uncaged and why);
//! every step prints one line; the exit status is 1 when any expectation
//! failed. A call without `expect` only has to succeed.
//!
//! With `--project`, steps are `start_session`, `idle`, `compact` and
//! `expect_audit` on agent paths instead (see the `project` module and
//! [`kaged_host_sim::scenario::ProjectScript`]).

use std::path::Path;
use std::process::ExitCode;

use kaged_host_sim::scenario::{run_steps, Script, ScriptError};
use kaged_host_sim::HostSim;

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
    let session = host.launch(dir).await.map_err(|e| {
        CliError::Failed(one_line(
            &format!("cannot start the plugin in {}", dir.display()),
            &e,
        ))
    })?;
    kaged_host_core::outln!("{}", super::caging::line(&session, None));
    let outcomes = run_steps(host, &session, &script, &mut |i, o| {
        let mark = if o.ok { "ok  " } else { "FAIL" };
        kaged_host_core::outln!("step {i}: {mark} {}", o.line);
    })
    .await;
    let failures = outcomes.iter().filter(|o| !o.ok).count();
    let outcome = session.shutdown().await;
    kaged_host_core::outln!("shutdown: {outcome}");
    kaged_host_core::outln!("{} step(s), {failures} failed", script.steps.len());
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
