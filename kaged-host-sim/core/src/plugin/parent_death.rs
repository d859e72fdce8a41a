//! In a spawn's child, between fork and exec: SIGKILL when the host dies
//! (`PR_SET_PDEATHSIG`), so that a host killed without a word (`kill -9`
//! of `up`) leaves no plugin behind, even one that ignores the EOF on its
//! stdin. Caged, bwrap sets the same on itself once it runs
//! (`--die-with-parent`); set in the child, it also covers the moment
//! before. The signal follows the thread that forked, as bwrap's does.

use rustix::process::{getppid, set_parent_process_death_signal, Pid, Signal};

/// Ask for SIGKILL when `host` (the parent, its pid read before the fork)
/// dies, and fail at once (`ESRCH`) when it already has. Set it after any
/// change of uid or gid, which clears it. System calls only.
pub(crate) fn die_with(host: Pid) -> std::io::Result<()> {
    set_parent_process_death_signal(Some(Signal::KILL))?;
    if getppid() != Some(host) {
        return Err(rustix::io::Errno::SRCH.into());
    }
    Ok(())
}
