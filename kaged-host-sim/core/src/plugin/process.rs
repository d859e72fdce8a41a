//! The life of one plugin: exit detection (`plugin.crashed`), killing
//! (`plugin.killed`) and process-group clean-up, for a child process or an
//! in-process peer.
//!
//! Nothing may outlive the host: every end of a child process (crash,
//! shutdown, kill) is followed by SIGKILL to its whole process group and by
//! reaping the group's members. A caged plugin's group is the cage's
//! (bwrap's init and the plugin, see `plugin::caged`); bwrap itself, the
//! host's child, is watched for the exit and killed with the group. The host makes itself a child subreaper
//! (`PR_SET_CHILD_SUBREAPER`) so that orphaned grandchildren are re-parented
//! to it and can be reaped rather than left as zombies.

use std::sync::Once;
use std::time::Duration;

use rustix::process::{Pid, Signal, WaitOptions};
use serde_json::json;
use tokio::process::Child;
use tokio::sync::watch;

use crate::cage::CageStatus;
use crate::observe::audit::AuditEvent;
use crate::plugin::caged::CageRuntime;
use crate::plugin::connection::{Connection, Ending};
use crate::time::{Timeouts, KILL_CONFIRM_MIN, REAP_POLL};

/// How a plugin ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitInfo {
    /// The exit code, when it exited normally (`None` for an in-process peer).
    pub code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
}

impl std::fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code, self.signal) {
            (Some(c), _) => write!(f, "exit code {c}"),
            (None, Some(s)) => write!(f, "killed by signal {s}"),
            (None, None) => write!(f, "ended"),
        }
    }
}

impl ExitInfo {
    fn from_status(s: std::process::ExitStatus) -> ExitInfo {
        use std::os::unix::process::ExitStatusExt;
        ExitInfo {
            code: s.code(),
            signal: s.signal(),
        }
    }

    /// The exit of bwrap running a caged plugin: bwrap reports a plugin
    /// that died of signal N as exit code 128 + N (the shell's convention),
    /// read back here as that signal (so a plugin that itself exits with
    /// 129..=192 is reported as killed by a signal: bwrap tells no
    /// difference). bwrap itself killed by a signal keeps that signal.
    fn from_cage_status(s: std::process::ExitStatus) -> ExitInfo {
        let info = ExitInfo::from_status(s);
        match info.code {
            Some(c) if (129..=128 + 64).contains(&c) => ExitInfo {
                code: None,
                signal: Some(c - 128),
            },
            _ => info,
        }
    }

    /// Exit code 0, or an in-process peer that closed its end.
    pub fn is_clean(&self) -> bool {
        self.signal.is_none() && matches!(self.code, Some(0) | None)
    }
}

/// Make this process a child subreaper (once; errors are logged).
pub fn become_subreaper() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if let Err(e) = rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
            tracing::warn!(error = %e, "cannot become a child subreaper");
        }
    });
}

/// Send `sig` to process group `pgid`; `false` when no process is left.
pub fn signal_group(pgid: u32, sig: Signal) -> bool {
    match Pid::from_raw(pgid as i32) {
        Some(pid) => rustix::process::kill_process_group(pid, sig).is_ok(),
        None => false,
    }
}

/// Whether any process (zombies included) of group `pgid` exists.
pub fn group_alive(pgid: u32) -> bool {
    match Pid::from_raw(pgid as i32) {
        Some(pid) => !matches!(
            rustix::process::test_kill_process_group(pid),
            Err(rustix::io::Errno::SRCH)
        ),
        None => false,
    }
}

/// SIGKILL the group and reap what it leaves, polling until it is gone or
/// `limit` passed. Call only after the leader has been reaped. Returns
/// whether the group is gone.
pub async fn kill_and_reap_group(pgid: u32, limit: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    signal_group(pgid, Signal::KILL);
    loop {
        if let Some(pid) = Pid::from_raw(pgid as i32) {
            while let Ok(Some(_)) = rustix::process::waitpgid(pid, WaitOptions::NOHANG) {}
        }
        if !group_alive(pgid) {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            tracing::warn!(pgid, "process group still present");
            return false;
        }
        tokio::time::sleep(REAP_POLL).await;
    }
}

/// The life of one plugin.
#[derive(Debug)]
pub(crate) struct Lifecycle {
    pub(crate) conn: Connection,
    /// The process group (the plugin's pid, or the cage's).
    pub(crate) pid: Option<u32>,
    /// bwrap's pid, when caged.
    pub(crate) bwrap_pid: Option<u32>,
    /// Caged or not (`None` in-process).
    pub(crate) cage: Option<CageStatus>,
    pub(crate) timeouts: Timeouts,
    exit: watch::Receiver<Option<ExitInfo>>,
    done: watch::Sender<bool>,
}

impl Lifecycle {
    /// Watch a child process: the plugin, whose process group is `pid`,
    /// or bwrap running it (`runtime`), the cage's group being `pid`.
    pub(crate) fn for_child(
        conn: Connection,
        mut child: Child,
        pid: u32,
        timeouts: Timeouts,
        cage: CageStatus,
        mut runtime: Option<CageRuntime>,
    ) -> Lifecycle {
        let (tx, rx) = watch::channel(None);
        let life = Lifecycle {
            conn: conn.clone(),
            pid: Some(pid),
            bwrap_pid: runtime.as_ref().map(|r| r.bwrap_pid),
            cage: Some(cage),
            timeouts,
            exit: rx,
            done: watch::channel(false).0,
        };
        let done = life.done.clone();
        tokio::spawn(async move {
            let info = match child.wait().await {
                Ok(s) if runtime.is_some() => ExitInfo::from_cage_status(s),
                Ok(s) => ExitInfo::from_status(s),
                Err(_) => ExitInfo {
                    code: None,
                    signal: None,
                },
            };
            // bwrap is gone, and with it every process of the cage: its
            // cgroups go before anyone is told the plugin exited.
            if let Some(r) = runtime.as_mut() {
                r.release_settled().await;
            }
            tx.send_replace(Some(info));
            // Nothing of the plugin may outlive it.
            kill_and_reap_group(pid, timeouts.sigterm_grace).await;
            if let Some(r) = runtime.as_mut() {
                r.release();
            }
            on_exit(&conn, info, Some(pid), &timeouts, &done).await;
        });
        life
    }

    /// Watch an in-process peer: it "exits" when its end of the pipe closes.
    pub(crate) fn in_process(conn: Connection, timeouts: Timeouts) -> Lifecycle {
        let (tx, rx) = watch::channel(None);
        let life = Lifecycle {
            conn: conn.clone(),
            pid: None,
            bwrap_pid: None,
            cage: None,
            timeouts,
            exit: rx,
            done: watch::channel(false).0,
        };
        let done = life.done.clone();
        tokio::spawn(async move {
            conn.wait_closed().await;
            let info = ExitInfo {
                code: None,
                signal: None,
            };
            tx.send_replace(Some(info));
            on_exit(&conn, info, None, &timeouts, &done).await;
        });
        life
    }

    /// The exit, once known.
    pub(crate) fn exit_info(&self) -> Option<ExitInfo> {
        *self.exit.borrow()
    }

    /// Wait up to `limit` for the exit.
    pub(crate) async fn wait_exit(&self, limit: Duration) -> Option<ExitInfo> {
        let mut rx = self.exit.clone();
        let r = tokio::time::timeout(limit, rx.wait_for(Option::is_some)).await;
        match r {
            Ok(Ok(v)) => *v,
            _ => None,
        }
    }

    /// Wait until the end was fully handled and audited.
    pub(crate) async fn wait_done(&self) {
        let mut rx = self.done.subscribe();
        let _ = rx.wait_for(|d| *d).await;
    }

    pub(crate) fn mark_done(&self) {
        self.done.send_replace(true);
    }

    /// Kill the plugin (SIGKILL to its group, or close an in-process pipe),
    /// audit `plugin.killed {reason, via: "sigkill"}`. Idempotent: later callers wait for the
    /// first one; a plugin that already ended is left alone.
    pub(crate) async fn kill(&self, reason: &str) {
        self.force_end(reason, false).await
    }

    /// End the plugin as the spec's Health checks row says, "SIGTERM →
    /// SIGKILL": SIGTERM to its group, wait `sigterm_grace` (scaled) for the
    /// exit, then SIGKILL; audit `plugin.killed {reason, via}`, `via` saying
    /// what ended the process: `"sigkill"` when it died of SIGKILL, else
    /// `"sigterm"` (it died of SIGTERM or exited on its own after it). An
    /// in-process peer has its pipe closed. Idempotent like [`Self::kill`].
    pub(crate) async fn terminate(&self, reason: &str) {
        self.force_end(reason, true).await
    }

    async fn force_end(&self, reason: &str, sigterm_first: bool) {
        match self
            .conn
            .transition(&[Ending::Running, Ending::ShuttingDown], Ending::Killing)
        {
            Ok(_) | Err(Ending::Killing) => {}
            Err(_) => return self.wait_done().await,
        }
        if !self.conn.claim_kill() {
            return self.wait_done().await;
        }
        let mut data = json!({"reason": reason, "pid": self.pid});
        match self.pid {
            Some(pid) => {
                let grace = self.timeouts.sigterm_grace;
                let mut exit = None;
                if sigterm_first {
                    signal_group(pid, Signal::TERM);
                    exit = self.wait_exit(grace).await;
                }
                if exit.is_none() {
                    signal_group(pid, Signal::KILL);
                    // SIGKILL cannot be ignored; the bound only guards odd kernels.
                    exit = self.wait_exit(grace.max(KILL_CONFIRM_MIN)).await;
                }
                kill_and_reap_group(pid, grace).await;
                if !sigterm_first {
                    data["via"] = json!("sigkill");
                } else {
                    // The exit status, not the timer, says what ended it: a
                    // process that died of SIGTERM keeps signal 15 even when
                    // its exit is noticed after the grace.
                    let killed = exit.is_none_or(|e| e.signal == Some(Signal::KILL.as_raw()));
                    data["via"] = json!(if killed { "sigkill" } else { "sigterm" });
                }
            }
            None => self.conn.close(),
        }
        self.conn.shared.audit(AuditEvent::Killed, data);
        self.conn.close();
        self.conn.transition(&[Ending::Killing], Ending::Ended).ok();
        self.mark_done();
    }

    /// Synchronous last resort (used by `Drop`): SIGKILL the group (and
    /// bwrap's, when caged).
    pub(crate) fn kill_now(&self) {
        for pid in [self.pid, self.bwrap_pid].into_iter().flatten() {
            signal_group(pid, Signal::KILL);
        }
        self.conn.close();
    }
}

/// After an exit: if nobody was ending the plugin, it crashed.
async fn on_exit(
    conn: &Connection,
    info: ExitInfo,
    pid: Option<u32>,
    timeouts: &Timeouts,
    done: &watch::Sender<bool>,
) {
    if conn.transition(&[Ending::Running], Ending::Ended).is_err() {
        return;
    }
    conn.wait_stderr_done(timeouts.sigterm_grace).await;
    audit_crash(conn, info, pid);
    conn.close();
    done.send_replace(true);
}

/// Audit `plugin.crashed` with the last 50 stderr lines.
pub(crate) fn audit_crash(conn: &Connection, info: ExitInfo, pid: Option<u32>) {
    tracing::warn!(plugin = conn.plugin(), info = %info, "plugin exited unexpectedly");
    conn.shared.audit(
        AuditEvent::Crashed,
        json!({
            "exit_code": info.code,
            "signal": info.signal,
            "last_stderr": conn.stderr_tail(),
            "pid": pid,
        }),
    );
}
