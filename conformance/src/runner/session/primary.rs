//! The primary spawn: the run's first spawn, whose start `launch.starts`
//! judges and whose handshake every `handshake.*` case reads. The suite
//! listens for a quiet window (to catch a plugin that speaks first), then
//! runs the host's handshake and keeps the plugin's raw `initialize`
//! answer; the outcome decides how later cases get sessions ([`Mode`]).

use std::time::Instant;

use kaged_host_core::audit::AuditRecord;
use kaged_host_core::quiet::QuietWindow;
use kaged_host_core::transcript::Transcript;
use kaged_host_core::ExitInfo;
use kaged_host_core::PluginHandle;
use kaged_host_core::{HandshakeError, HandshakeInfo};
use kaged_plugin_protocol::InitializeResult;
use serde_json::Value;

use super::barrier::end_at_once;
use super::context::RunContext;
use super::processes::{describe_exit, describe_launch, retire, LaneProcesses, Mode};

/// How long the suite listens before sending `initialize`, to catch a
/// plugin that speaks first: a quiet window
/// ([`kaged_host_core::quiet::QuietWindow`], counted in the plugin's own
/// CPU time), ended early when something arrived. A plugin that speaks
/// later still fails `handshake.silent_before_initialize`: the host's
/// handshake kills it for a message before the `initialize` answer.
async fn listen(
    quiet: QuietWindow,
    session: &PluginHandle,
    rx: &tokio::sync::broadcast::Receiver<Value>,
) {
    quiet.wait(session, || !rx.is_empty()).await;
}

/// What the primary spawn showed.
pub(crate) struct Primary {
    /// When the spawn began.
    pub started: Instant,
    /// Why the process could not be started, if it could not.
    pub launch_error: Option<String>,
    /// The host's handshake verdict.
    pub outcome: Option<Result<HandshakeInfo, HandshakeError>>,
    /// Messages the plugin sent before `initialize`.
    pub early: Vec<Value>,
    /// The plugin's raw answer to `initialize`.
    pub answer: Option<Value>,
    /// The audit events of the handshake.
    pub events: Vec<AuditRecord>,
    /// The audit events of the whole start (spawn, handshake, retiring).
    pub launch_events: Vec<AuditRecord>,
    /// How the process ended, if it did during the handshake.
    pub exit: Option<ExitInfo>,
    /// The last lines of its stderr.
    pub stderr: Vec<String>,
    /// The spawn's wire transcript.
    pub transcript: Transcript,
    /// Whether the spawn ran in bwrap.
    pub caged: bool,
    /// Its cage as applied (the cgroup it got, the uid it ran as), when
    /// it ran caged: what the report states.
    pub applied_cage: Option<kaged_host_core::cage::CageSummary>,
}

/// Why `launch.starts` is skipped (and no session can be had) when
/// `command[0]` cannot be started.
pub(crate) const NOT_STARTED: &str = "the command cannot be started (see launch.command_exists)";

/// Start the primary spawn and make it the shared session when its
/// handshake passed; `None` when `command[0]` cannot be started (then no
/// session can be had).
pub(crate) async fn start(ctx: &RunContext, processes: &mut LaneProcesses) -> Option<Primary> {
    if ctx.command().is_err() {
        processes.adopt(Mode::Unavailable(NOT_STARTED.into()), None);
        return None;
    }
    let started = Instant::now();
    let mark = ctx.audit.len();
    let t = processes.new_transcript();
    let quiet = QuietWindow::for_timeouts(&ctx.timeouts);
    let (mut primary, session) = match ctx.host(t.clone()).launch_lenient(&ctx.dir).await {
        Err(e) => (Primary::failed(describe_launch(&e), t), None),
        Ok(session) => handshake(ctx, session, t, quiet, mark).await,
    };
    primary.started = started;
    primary.launch_events = ctx.audit.since(mark);
    let shared = session.map(|s| (s, primary.transcript.clone()));
    processes.adopt(mode_for(&primary), shared);
    Some(primary)
}

/// Listen for the quiet window, then run the host's handshake; the
/// session is returned when the handshake passed (else it is retired). Its
/// events are those since `mark`, taken before the spawn: `plugin.spawned`
/// is audited when the process starts, before the handshake.
async fn handshake(
    ctx: &RunContext,
    session: PluginHandle,
    transcript: Transcript,
    quiet: QuietWindow,
    mark: usize,
) -> (Primary, Option<PluginHandle>) {
    let mut rx = session.raw().inbound();
    listen(quiet, &session, &rx).await;
    let mut early = Vec::new();
    while let Ok(v) = rx.try_recv() {
        if v.is_object() || v.is_array() {
            early.push(v);
        }
    }
    let outcome = session.handshake().await;
    let mut answer = None;
    while let Ok(v) = rx.try_recv() {
        let is_answer = v.get("id").and_then(Value::as_u64) == Some(1)
            && (v.get("result").is_some() || v.get("error").is_some());
        if is_answer && answer.is_none() {
            answer = Some(v);
        }
    }
    let ok = outcome.is_ok();
    if ok {
        // The daemon's first call after `initialized` (ADDENDUM §12, §15);
        // `config.update_accepted` judges how it went.
        session.send_first_config(&ctx.first_config).await;
    }
    let primary = Primary {
        started: Instant::now(),
        launch_error: None,
        early,
        answer,
        events: ctx.audit.since(mark),
        launch_events: Vec::new(),
        exit: session.exit_info(),
        stderr: session.stderr_tail(),
        transcript,
        outcome: Some(outcome),
        caged: session.caged(),
        applied_cage: session.cage().and_then(|c| c.summary.clone()),
    };
    if ok {
        (primary, Some(session))
    } else {
        if matches!(primary.outcome, Some(Err(HandshakeError::Timeout(_)))) {
            // No answer within the initialize budget: the host kills it
            // (plugin-host.md, failure modes); no shutdown to wait for.
            end_at_once(&session, "conformance: no answer to initialize in time").await;
        }
        retire(session).await;
        (primary, None)
    }
}

impl Primary {
    fn failed(error: String, transcript: Transcript) -> Primary {
        Primary {
            started: Instant::now(),
            launch_error: Some(error),
            outcome: None,
            early: Vec::new(),
            answer: None,
            events: Vec::new(),
            launch_events: Vec::new(),
            exit: None,
            stderr: Vec::new(),
            transcript,
            caged: false,
            applied_cage: None,
        }
    }

    /// The process exited before answering `initialize`.
    pub fn exited_at_once(&self) -> bool {
        matches!(self.outcome, Some(Err(HandshakeError::Exited)))
    }

    /// How the process exited at once, with what its stderr says went
    /// wrong (the error and its frame, not a runtime's banner).
    pub fn exit_description(&self) -> String {
        let words = kaged_host_core::last_words::last_words(&self.stderr);
        format!(
            "exits at once ({}) before answering initialize; last stderr: {}",
            describe_exit(self.exit.map(|e| (e.code, e.signal))),
            if words.is_empty() {
                "(none)".to_string()
            } else {
                words.join(" | ")
            }
        )
    }

    /// The `initialize` result, if the answer is a well-formed one.
    pub fn result(&self) -> Option<InitializeResult> {
        serde_json::from_value(self.answer.as_ref()?.get("result")?.clone()).ok()
    }

    /// The host's handshake error, if the handshake failed.
    pub fn error(&self) -> Option<&HandshakeError> {
        self.outcome.as_ref()?.as_ref().err()
    }
}

/// How later cases get sessions after this primary spawn.
fn mode_for(p: &Primary) -> Mode {
    if let Some(e) = &p.launch_error {
        return Mode::Unavailable(format!("the plugin cannot be started: {e}"));
    }
    match &p.outcome {
        Some(Ok(_)) => Mode::Strict,
        Some(Err(HandshakeError::Exited)) => Mode::Unavailable("the plugin exits before answering initialize (see launch.starts)".into()),
        Some(Err(HandshakeError::Timeout(_))) => Mode::Unavailable("the plugin does not answer initialize (see handshake.answers_in_time)".into()),
        Some(Err(HandshakeError::ProtocolViolation { reason, .. })) if reason.starts_with("message_before_initialize") => {
            Mode::Unavailable("the host kills the plugin at every spawn: it speaks before initialize (see handshake.silent_before_initialize)".into())
        }
        Some(Err(_)) => Mode::Lenient,
        None => Mode::Unavailable("the plugin was not started".into()),
    }
}
