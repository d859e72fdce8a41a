//! `launch.*`: does `command[0]` resolve to an executable, does the
//! process start and stay up for the handshake, and does the copy
//! `plugin install` makes start too (ADDENDUM §14)? The start is the
//! primary spawn ([`crate::runner::session::primary`]), made before these cases are
//! judged.

use kaged_host_core::audit::AuditLog;
use kaged_host_core::validate::command_leaves_plugin_dir;
use kaged_host_core::SpawnError;
use kaged_host_engine::{CopyMode, InstallError, PluginStore};

use super::installed_copy::{self, NotStarted};
use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::Target;
use crate::runner::session::context::{CommandError, RunContext};
use crate::runner::session::primary::Primary;
use crate::runner::session::processes::LaneProcesses;

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

/// `launch.self_contained`: `command[0]` stays inside the plugin directory
/// (or is absolute), `plugin install` accepts the directory, and the copy
/// it makes (in a temporary store: the directory less `.git/` and what
/// `.kagedignore` names) starts and completes the handshake. A failure
/// says what the copy lacked: the command that does not resolve in it, or
/// its exit code and last stderr line, with what install left out.
pub(crate) async fn self_contained(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let program = ctx.manifest.command.first().cloned().unwrap_or_default();
    if command_leaves_plugin_dir(&program) {
        return Verdict::fail(format!(
            "expected: command[0] inside the plugin directory, or an absolute system path; \
             actual: `{program}` leaves it, so `plugin install` refuses the plugin \
             (pack it first: `cargo kaged pack`)"
        ));
    }
    // Where none of the plugin's grants reaches: a `write:fs:/tmp` grant
    // would otherwise be refused for reaching this scratch store.
    let store_root = match kaged_host_engine::scratch_store_dir(&ctx.dir) {
        Ok(d) => d,
        Err(e) => return Verdict::skip(format!("cannot create a temporary plugin store: {e}")),
    };
    // Hard links where the file system allows: the copy is thrown away
    // and its plugin runs with its directory read-only, so a multi-GiB
    // `target/` (which install copies, ADDENDUM §16) costs no time.
    let store = match PluginStore::open(store_root.path(), AuditLog::memory()) {
        Ok(s) => s.with_copy_mode(CopyMode::HardLinks),
        Err(e) => return Verdict::skip(format!("cannot open a temporary plugin store: {e}")),
    };
    let refused = |e: InstallError| {
        Verdict::fail(format!(
            "expected: `plugin install` accepts the directory; actual: {e}"
        ))
    };
    let plan = match store.plan(&ctx.dir) {
        Ok(p) => p,
        Err(e) => return refused(e),
    };
    if let Err(e) = store.install(&ctx.dir, |_| true) {
        return refused(e);
    }
    let copy = store.plugin_dir(&ctx.manifest.name);
    let expected = "expected: the installed copy (the plugin directory as `plugin install` \
                    copies it) starts and completes the handshake";
    if let Some(why) = installed_copy::unresolved_in_copy(ctx, &copy) {
        let left = installed_copy::left_out_note(&plan);
        return Verdict::fail(format!("{expected}; actual: {why}{left}"));
    }
    match installed_copy::start(ctx, processes, scope, &copy).await {
        Ok(()) => Verdict::pass(format!(
            "the installed copy starts and completes the handshake (`{program}`)"
        )),
        Err(NotStarted::NoSession(why)) => Verdict::no_session(why),
        Err(NotStarted::Failed(what)) => {
            let left = installed_copy::left_out_note(&plan);
            Verdict::fail(format!("{expected}; actual: {what}{left}"))
        }
    }
}
