//! Starting the copy `plugin install` makes of the plugin (in a temporary
//! store) for `launch.self_contained`, and saying what the copy lacked
//! when it does not start: the command that does not resolve in it, or
//! how the process ended (exit code, last stderr line), with what install
//! left out of the directory.

use std::path::Path;
use std::time::Duration;

use kaged_host_core::{resolve_command, HandshakeError, PluginHandle, RequestError, SpawnError};
use kaged_host_engine::{InstallPlan, LeftOut, LeftOutReason, KAGEDIGNORE_FILE};
use kaged_plugin_protocol::methods;
use serde_json::json;

use crate::runner::judge::scope::Scope;
use crate::runner::session::context::RunContext;
use crate::runner::session::processes::{describe_exit, describe_launch, LaneProcesses, Mode};

/// How many left-out entries a detail names before "and N more".
const LEFT_OUT_SHOWN: usize = 5;

/// Why the installed copy did not start.
pub(crate) enum NotStarted {
    /// No session can be had this run (the plugin does not start in place
    /// either): the reason.
    NoSession(String),
    /// The copy failed where the plugin's own directory did not: what
    /// happened.
    Failed(String),
}

/// `command[0]` does not resolve in the installed copy `copy` although it
/// does in the plugin directory: why, in words.
pub(crate) fn unresolved_in_copy(ctx: &RunContext, copy: &Path) -> Option<String> {
    let program = ctx.manifest.command.first()?;
    ctx.command().ok()?;
    let err = resolve_command(program, copy).err()?;
    let how = match err {
        SpawnError::NotFound { path } => format!("{} does not exist", path.display()),
        SpawnError::NotExecutable { path } => format!("{} is not executable", path.display()),
        other => other.to_string(),
    };
    let link = std::fs::read_link(copy.join(program))
        .map(|to| {
            format!(
                " (`{program}` is a symbolic link to `{}`, which the copy does not hold)",
                to.display()
            )
        })
        .unwrap_or_default();
    Some(format!(
        "the command `{program}` does not resolve in the installed copy: {how}{link}"
    ))
}

/// Start the copy in `copy` and run the handshake the run's mode asks
/// for (strict, or lenient: any answer to `initialize`), then retire it.
pub(crate) async fn start(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    copy: &Path,
) -> Result<(), NotStarted> {
    let strict = match processes.mode() {
        Mode::Unavailable(why) => return Err(NotStarted::NoSession(why.clone())),
        Mode::Strict => true,
        Mode::Lenient => false,
    };
    let t = processes.new_transcript();
    scope.touch_from(&t, 0);
    let s = ctx
        .host(t)
        .launch_lenient(copy)
        .await
        .map_err(|e| NotStarted::Failed(describe_launch(&e)))?;
    let outcome = match handshake(ctx, &s, strict).await {
        Ok(()) => Ok(()),
        Err(Ended::OnItsOwn) => Err(NotStarted::Failed(ended(ctx, &s).await)),
        Err(Ended::Otherwise(e)) => Err(NotStarted::Failed(e)),
    };
    processes.retire(s).await;
    outcome
}

/// How a handshake of the copy failed.
enum Ended {
    /// The process ended (or closed its stdout) before answering.
    OnItsOwn,
    /// Anything else (no answer in time, a wrong answer): the error.
    Otherwise(String),
}

async fn handshake(ctx: &RunContext, s: &PluginHandle, strict: bool) -> Result<(), Ended> {
    if strict {
        return match s.handshake().await {
            Ok(_) => {
                s.send_first_config(&ctx.first_config).await;
                Ok(())
            }
            Err(HandshakeError::Exited) => Err(Ended::OnItsOwn),
            Err(e) => Err(Ended::Otherwise(format!("handshake failed: {e}"))),
        };
    }
    let params = serde_json::to_value(ctx.init_params())
        .map_err(|e| Ended::Otherwise(format!("cannot encode initialize: {e}")))?;
    let raw = s.raw();
    match raw
        .request(methods::INITIALIZE, Some(params), ctx.timeouts.initialize)
        .await
    {
        Ok(_) | Err(RequestError::Rpc(_)) => {}
        Err(RequestError::Closed) => return Err(Ended::OnItsOwn),
        Err(e) => return Err(Ended::Otherwise(format!("no initialize answer: {e}"))),
    }
    raw.send_value(&json!({"jsonrpc": "2.0", "method": methods::INITIALIZED, "params": {}}));
    Ok(())
}

/// How the copy's process ended: its exit and its last stderr line.
async fn ended(ctx: &RunContext, s: &PluginHandle) -> String {
    // Until the exit is seen and the end handled (stderr read to its end).
    let limit = ctx.timeouts.sigterm_grace.max(Duration::from_secs(1));
    let exit = s.wait_exit(limit).await;
    let last = match kaged_host_core::last_words::last_words(&s.stderr_tail()).as_slice() {
        [] => "no stderr".to_string(),
        [line] => format!("last stderr line: `{line}`"),
        lines => format!("on stderr: `{}`", lines.join(" | ")),
    };
    format!(
        "it exits at once ({}) before answering initialize; {last}",
        describe_exit(exit.map(|e| (e.code, e.signal)))
    )
}

/// "; install left out: `vendor/` (.kagedignore: `vendor/`)": what the
/// copy lacks by install's rules (history aside), or a note that it left
/// out nothing but history.
pub(crate) fn left_out_note(plan: &InstallPlan) -> String {
    let left: Vec<LeftOut> = match plan.left_out() {
        Ok(l) => l
            .into_iter()
            .filter(|l| l.reason != LeftOutReason::Git)
            .collect(),
        Err(e) => return format!("; what install leaves out is unknown: {e}"),
    };
    if left.is_empty() {
        return format!(
            "; install left out nothing but `.git/` (no {KAGEDIGNORE_FILE} line applies)"
        );
    }
    let shown: Vec<String> = left
        .iter()
        .take(LEFT_OUT_SHOWN)
        .map(ToString::to_string)
        .collect();
    let more = match left.len().saturating_sub(LEFT_OUT_SHOWN) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!("; install left out: {}{more}", shown.join(", "))
}
