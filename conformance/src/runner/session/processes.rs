//! [`LaneProcesses`]: the plugin processes of a lane and how cases get one
//! — the shared process most cases use, fresh spawns for cases that could
//! poison it, spawns without a handshake — and retiring a spawn without
//! leaking a process. Case
//! functions receive their lane's `LaneProcesses` as an argument (`runner::run::lanes`);
//! a spawn whose case is judged is ended through [`LaneProcesses::retire`],
//! which waits for the shutdown barrier (`runner::session::barrier`).

use std::path::Path;
use std::time::Duration;

use kaged_host_core::group_alive;
use kaged_host_core::time::REAP_POLL;
use kaged_host_core::transcript::Transcript;
use kaged_host_core::LaunchError;
use kaged_host_core::PluginHandle;
use kaged_host_core::RequestError;
use kaged_host_core::{CallError, FirstConfig};
use kaged_plugin_protocol::{methods, InitializeParams};
use serde_json::{json, Value};

use super::barrier::{end_at_once, Barrier, Shutdown, JUDGED, QUICK_END_NOTE};
use super::context::RunContext;
use crate::runner::judge::scope::Scope;
use kaged_plugin_protocol::error_chain::chain as error_chain;

/// How the cases after the handshake get a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `HostSim::launch`: the full, strict handshake.
    Strict,
    /// `launch_lenient` and a raw `initialize`/`initialized` exchange that
    /// accepts any answer (the strict handshake failed).
    Lenient,
    /// No session can be had; the reason.
    Unavailable(String),
}

/// The plugin processes of a lane: the mode, the lane's shared one, every
/// transcript (kept for the whole-run stderr scan), the spawns waiting for
/// the shutdown barrier before they end, and the notes for the case's
/// detail.
pub(crate) struct LaneProcesses {
    mode: Mode,
    shared: Option<(PluginHandle, Transcript)>,
    transcripts: Vec<Transcript>,
    barrier: Barrier,
    pending: Vec<PluginHandle>,
    notes: Vec<String>,
    unanswered: Vec<String>,
}

impl LaneProcesses {
    /// No session yet, and none to be had until [`LaneProcesses::adopt`].
    pub fn new() -> LaneProcesses {
        LaneProcesses {
            mode: Mode::Unavailable("the plugin was not started".into()),
            shared: None,
            transcripts: Vec::new(),
            barrier: Barrier::judged(Shutdown::Unjudged),
            pending: Vec::new(),
            notes: Vec::new(),
            unanswered: Vec::new(),
        }
    }

    /// A lane's sessions: had by `mode`, `shared` (if any) as its shared
    /// session, ended as `barrier` judges.
    pub fn for_lane(
        mode: Mode,
        shared: Option<(PluginHandle, Transcript)>,
        barrier: Barrier,
    ) -> LaneProcesses {
        let mut s = LaneProcesses::new();
        s.mode = mode;
        s.barrier = barrier;
        // The primary spawn's transcript is the run's, not the lane's.
        s.shared = shared;
        s
    }

    /// Take the shared session out (the primary spawn, for a lane).
    pub fn take_shared(&mut self) -> Option<(PluginHandle, Transcript)> {
        self.shared.take()
    }

    /// End `s`, its case judged: held until the case has run and the
    /// barrier's judgement is in ([`LaneProcesses::finish_pending`]), then ended
    /// at once when the barrier judged that the plugin ignores `shutdown`,
    /// else gracefully ([`retire`]). Always held, so that the order of a
    /// case's audit events never depends on when the judgement came.
    pub async fn retire(&mut self, s: PluginHandle) {
        self.pending.push(s);
    }

    async fn end(&mut self, s: PluginHandle, how: Shutdown) {
        if how == Shutdown::Ignored && s.is_running() {
            end_at_once(&s, JUDGED).await;
            if !self.notes.iter().any(|n| n == QUICK_END_NOTE) {
                self.notes.push(QUICK_END_NOTE.to_string());
            }
        }
        retire(s).await;
    }

    /// Whether spawns wait for the barrier's judgement.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Wait for the barrier's judgement and end the spawns held for it.
    pub async fn finish_pending(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let how = self.barrier.wait().await;
        for s in std::mem::take(&mut self.pending) {
            self.end(s, how).await;
        }
    }

    /// `method` got no answer within its budget on this lane's session (a
    /// later case of the lane that needs its answer is judged blocked at
    /// once instead of waiting a budget of its own).
    pub fn note_unanswered(&mut self, method: &str) {
        self.unanswered.push(method.to_string());
    }

    /// Whether `method` went unanswered on this lane's session.
    pub fn was_unanswered(&self, method: &str) -> bool {
        self.unanswered.iter().any(|m| m == method)
    }

    /// The notes for the detail of the case that just ran.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// How sessions are had from now on.
    pub fn mode(&self) -> &Mode {
        &self.mode
    }

    /// Get sessions by `mode` from now on; `shared` (the primary spawn,
    /// when its handshake passed) becomes the shared session.
    pub fn adopt(&mut self, mode: Mode, shared: Option<(PluginHandle, Transcript)>) {
        self.mode = mode;
        self.shared = shared;
    }

    /// A fresh in-memory transcript, kept for the whole-run stderr scan.
    pub fn new_transcript(&mut self) -> Transcript {
        let t = Transcript::memory();
        self.transcripts.push(t.clone());
        t
    }

    /// Every transcript of the run.
    pub fn transcripts(&self) -> &[Transcript] {
        &self.transcripts
    }

    /// Attach the shared session's transcript, from now on, to `scope`.
    pub fn touch_shared(&self, scope: &mut Scope) {
        if let Some((_, t)) = &self.shared {
            scope.touch(t);
        }
    }

    /// Spawn without any handshake (the transcript is added to `scope`).
    pub async fn spawn_unready(
        &mut self,
        ctx: &RunContext,
        scope: &mut Scope,
    ) -> Result<PluginHandle, String> {
        self.spawn_unready_in(ctx, scope, &ctx.dir).await
    }

    /// [`LaneProcesses::spawn_unready`] from the plugin directory `dir` (a copy
    /// of the plugin's).
    async fn spawn_unready_in(
        &mut self,
        ctx: &RunContext,
        scope: &mut Scope,
        dir: &Path,
    ) -> Result<PluginHandle, String> {
        let t = self.new_transcript();
        scope.touch_from(&t, 0);
        ctx.host(t)
            .launch_lenient(dir)
            .await
            .map_err(|e| describe_launch(&e))
    }

    /// A fresh, ready session for one case (strict or lenient handshake as
    /// the mode says); `Err` explains why there is none.
    pub async fn fresh(
        &mut self,
        ctx: &RunContext,
        scope: &mut Scope,
    ) -> Result<PluginHandle, String> {
        self.fresh_in(ctx, scope, &ctx.dir).await
    }

    /// [`LaneProcesses::fresh`] from the plugin directory `dir` (a copy of the
    /// plugin's, as `plugin install` makes it).
    pub async fn fresh_in(
        &mut self,
        ctx: &RunContext,
        scope: &mut Scope,
        dir: &Path,
    ) -> Result<PluginHandle, String> {
        self.ready(ctx, scope, dir, &ctx.first_config).await
    }

    /// A fresh session past its handshake that was sent no config yet: the
    /// caller sends the first (`config.update_accepted`).
    pub async fn fresh_unconfigured(
        &mut self,
        ctx: &RunContext,
        scope: &mut Scope,
    ) -> Result<PluginHandle, String> {
        self.ready(ctx, scope, &ctx.dir, &FirstConfig::Off).await
    }

    async fn ready(
        &mut self,
        ctx: &RunContext,
        scope: &mut Scope,
        dir: &Path,
        first: &FirstConfig,
    ) -> Result<PluginHandle, String> {
        match self.mode.clone() {
            Mode::Unavailable(why) => Err(why),
            Mode::Strict => {
                let t = self.new_transcript();
                scope.touch_from(&t, 0);
                ctx.host(t)
                    .launch_with(dir, first)
                    .await
                    .map_err(|e| describe_launch(&e))
            }
            Mode::Lenient => {
                let s = self.spawn_unready_in(ctx, scope, dir).await?;
                match lenient_handshake(ctx, &s, first).await {
                    Ok(()) => Ok(s),
                    Err(e) => {
                        self.retire(s).await;
                        Err(e)
                    }
                }
            }
        }
    }

    /// The shared session, (re)started when there is none or it ended.
    pub async fn shared(
        &mut self,
        ctx: &RunContext,
        scope: &mut Scope,
    ) -> Result<&PluginHandle, String> {
        let alive = self
            .shared
            .as_ref()
            .is_some_and(|(s, _)| s.is_running() && s.exit_info().is_none());
        if !alive {
            if let Some((old, _)) = self.shared.take() {
                self.retire(old).await;
            }
            let t = self.new_transcript();
            scope.touch_from(&t, 0);
            let s = match self.mode.clone() {
                Mode::Unavailable(why) => return Err(why),
                Mode::Strict => ctx
                    .host(t.clone())
                    .launch(&ctx.dir)
                    .await
                    .map_err(|e| describe_launch(&e))?,
                Mode::Lenient => {
                    let s = ctx
                        .host(t.clone())
                        .launch_lenient(&ctx.dir)
                        .await
                        .map_err(|e| describe_launch(&e))?;
                    if let Err(e) = lenient_handshake(ctx, &s, &ctx.first_config).await {
                        self.retire(s).await;
                        return Err(e);
                    }
                    s
                }
            };
            self.shared = Some((s, t));
        }
        match &self.shared {
            Some((s, _)) => Ok(s),
            None => Err("no session".into()),
        }
    }

    /// Shut the shared session down, if any ([`LaneProcesses::retire`]).
    pub async fn close_shared(&mut self) {
        if let Some((s, _)) = self.shared.take() {
            self.retire(s).await;
        }
    }
}

/// `initialize` through the raw channel, accepting any answer (result or
/// error), then `initialized`.
async fn lenient_handshake(
    ctx: &RunContext,
    s: &PluginHandle,
    first: &FirstConfig,
) -> Result<(), String> {
    bare_lenient_handshake(s, ctx.init_params(), ctx.timeouts.initialize).await?;
    // The daemon's first call after `initialized` (ADDENDUM §12, §15).
    match s.send_first_config(first).await {
        Some(sent) if !s.is_running() => Err(format!(
            "the first config.update, sent right after initialized as the daemon does, ended the session: {}",
            sent.refused.unwrap_or_else(|| "the plugin exited".into())
        )),
        _ => Ok(()),
    }
}

async fn bare_lenient_handshake(
    s: &PluginHandle,
    params: InitializeParams,
    timeout: Duration,
) -> Result<(), String> {
    let raw = s.raw();
    let params = serde_json::to_value(params).map_err(|e| e.to_string())?;
    match raw
        .request(methods::INITIALIZE, Some(params), timeout)
        .await
    {
        Ok(_) | Err(RequestError::Rpc(_)) => {}
        Err(e) => {
            return Err(format!(
                "no usable initialize answer even with a lenient handshake: {e}"
            ))
        }
    }
    raw.send_value(&json!({"jsonrpc": "2.0", "method": methods::INITIALIZED, "params": {}}));
    Ok(())
}

/// After a call that ended the plugin, wait (bounded) until the host has
/// handled the end, so that the next case starts a new session.
pub(crate) async fn settle_after_call(s: &PluginHandle, r: &Result<Value, CallError>) {
    if matches!(r, Err(CallError::Closed { .. })) {
        let t = s.timeouts();
        let _ = s
            .wait_exit(t.sigterm_grace.max(Duration::from_secs(1)))
            .await;
    }
}

/// End a spawn now: a graceful shutdown when it still runs (bounded by the
/// scaled shutdown ladder), then make sure its process group is gone.
/// Returns a note when something had to be forced.
pub(crate) async fn retire(s: PluginHandle) -> Option<String> {
    if s.is_running() {
        s.shutdown().await;
    } else {
        // It ended on its own: let the host finish handling the end (its
        // `plugin.crashed` record), so the case reports it whenever it came.
        let limit = s.timeouts().sigterm_grace.max(Duration::from_secs(1));
        let _ = s.wait_exit(limit).await;
    }
    let pgid = s.pid()?;
    let limit = s.timeouts().sigterm_grace.max(Duration::from_millis(500));
    let deadline = tokio::time::Instant::now() + limit;
    while group_alive(pgid) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(REAP_POLL).await;
    }
    if group_alive(pgid) {
        s.kill("conformance: process group survived the session")
            .await;
        drop(s);
        return Some(format!(
            "process group {pgid} was still alive after the session ended"
        ));
    }
    None
}

/// One line for a launch failure, classified.
pub(crate) fn describe_launch(e: &LaunchError) -> String {
    use kaged_host_core::SpawnError;
    match e {
        LaunchError::InvalidManifest { report, .. } => format!("invalid manifest: {report}"),
        LaunchError::Spawn { source, .. } => match source {
            SpawnError::NotFound { path } => {
                format!("not found: {} does not exist", path.display())
            }
            SpawnError::NotExecutable { path } => format!("not executable: {}", path.display()),
            SpawnError::EmptyCommand => "the manifest's command is empty".into(),
            other => format!("cannot start: {}", error_chain(other)),
        },
        LaunchError::ExitedAtOnce { exit, stderr, .. } => format!(
            "exits at once ({}); last stderr: {}",
            describe_exit(exit.map(|e| (e.code, e.signal))),
            if stderr.is_empty() {
                "(none)".to_string()
            } else {
                stderr.join(" | ")
            }
        ),
        LaunchError::Handshake { source, .. } => format!("handshake failed: {source}"),
        LaunchError::FirstConfig { why, .. } => format!(
            "the first config.update, sent right after initialized as the daemon does, ended the session: {why}"
        ),
    }
}

/// `exit code N`, `signal N` or `unknown exit`.
pub(crate) fn describe_exit(e: Option<(Option<i32>, Option<i32>)>) -> String {
    match e {
        Some((Some(c), _)) => format!("exit code {c}"),
        Some((None, Some(s))) => format!("killed by signal {s}"),
        _ => "exit status unknown".into(),
    }
}
