//! `launch.*`: does `command[0]` resolve to an executable, and does the
//! process start and stay up for the handshake? The start is the primary
//! spawn ([`crate::runner::primary`]), made before these cases are judged.

use kaged_host_sim::SpawnError;

use crate::runner::context::{CommandError, RunContext};
use crate::runner::primary::Primary;
use crate::runner::verdict::Verdict;

/// `launch.command_exists`: `command[0]` resolves to an executable file.
pub(crate) fn command_exists(ctx: &RunContext) -> Verdict {
    let program = ctx.manifest.command.first().cloned().unwrap_or_default();
    match ctx.command() {
        Ok(p) => Verdict::pass(format!("{program} resolves to {}", p.display())),
        Err(CommandError::Empty) => {
            Verdict::fail("expected: a command; actual: the manifest's command is empty")
        }
        Err(CommandError::Unresolved(SpawnError::NotFound { path })) => Verdict::fail(format!(
            "expected: an executable file; actual: not found: {} does not exist",
            path.display()
        )),
        Err(CommandError::Unresolved(SpawnError::NotExecutable { path })) => Verdict::fail(format!(
            "expected: an executable file; actual: not executable: {} lacks the executable bit (chmod +x)",
            path.display()
        )),
        Err(CommandError::Unresolved(e)) => {
            Verdict::fail(format!("expected: an executable file; actual: {e}"))
        }
    }
}

/// `launch.starts`: the primary spawn started and stayed up for the
/// handshake.
pub(crate) fn starts(_: &RunContext, p: &Primary) -> Verdict {
    match &p.launch_error {
        Some(e) => Verdict::fail(format!("expected: the process starts; actual: {e}")),
        None if p.exited_at_once() => Verdict::fail(format!(
            "expected: the process stays up for the handshake; actual: {}",
            p.exit_description()
        )),
        None => Verdict::pass("the process started and stayed up for the handshake"),
    }
}
