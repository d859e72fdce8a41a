//! `kaged-host-sim call DIR METHOD [PARAMS_JSON] [--context JSON] [--json]`.
//!
//! stdout is the answer only; the `cage: ...` line goes to stderr.

use std::path::Path;
use std::process::ExitCode;

use kaged_plugin_protocol::PluginCallContext;
use serde_json::Value;

use super::{one_line, CliError};
use kaged_host_sim::HostSim;

/// The project id of the default agent context a tool call gets from the
/// CLI when `--context` is absent.
pub const CLI_PROJECT: &str = "kaged-host-sim";

/// Parse a `--context` / PARAMS argument.
pub(super) fn parse_json<T: serde::de::DeserializeOwned>(
    what: &str,
    text: &str,
) -> Result<T, CliError> {
    serde_json::from_str(text)
        .map_err(|e| CliError::Usage(one_line(&format!("invalid {what}"), &e)))
}

pub(super) async fn run(
    host: &HostSim,
    dir: &Path,
    method: &str,
    params: Option<&str>,
    context: Option<&str>,
    json: bool,
) -> Result<ExitCode, CliError> {
    let params: Option<Value> = params.map(|p| parse_json("PARAMS_JSON", p)).transpose()?;
    let ctx: Option<PluginCallContext> = context.map(|c| parse_json("--context", c)).transpose()?;
    let session = host.launch(dir).await.map_err(|e| {
        CliError::Failed(one_line(
            &format!("cannot start the plugin in {}", dir.display()),
            &e,
        ))
    })?;
    eprintln!("{}", super::caging::line(&session, None));
    // Tools are dispatched by agents: without --context, a tool gets the
    // primary agent's context of a CLI session.
    let ctx = match ctx {
        None if session.manifest().is_prefixed_tool(method) => Some(PluginCallContext::agent(
            CLI_PROJECT,
            "primary",
            "ses_cli",
            "req_cli_1",
        )),
        other => other,
    };
    let result = session.call(method, params, ctx).await;
    let outcome = session.shutdown().await;
    if !outcome.is_clean() {
        tracing::warn!(?outcome, "plugin did not stop cleanly");
    }
    match result {
        Ok(v) => {
            if json {
                println!("{v}");
            } else {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string())
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            if json {
                println!(
                    "{}",
                    serde_json::to_value(e.rpc_error()).unwrap_or(Value::Null)
                );
            } else {
                eprintln!("{}", one_line(&format!("error: {method} failed"), &e));
            }
            Ok(ExitCode::from(1))
        }
    }
}
