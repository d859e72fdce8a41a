//! The primary spawn: the run's first spawn, whose start `launch.starts`
//! judges and whose handshake every `handshake.*` case reads. The suite
//! listens for a quiet window (to catch a plugin that speaks first), then
//! runs the host's handshake and keeps the plugin's raw `initialize`
//! answer; the outcome decides how later cases get sessions ([`Mode`]).

use std::time::{Duration, Instant};

use kaged_host_core::audit::AuditRecord;
use kaged_host_core::time::Timeouts;
use kaged_host_core::transcript::Transcript;
use kaged_host_core::ExitInfo;
use kaged_host_core::PluginHandle;
use kaged_host_core::{HandshakeError, HandshakeInfo};
use kaged_plugin_protocol::InitializeResult;
use serde_json::Value;

use super::barrier::end_at_once;
use super::context::RunContext;
use super::sessions::{describe_exit, describe_launch, retire, Mode, Sessions};

/// How long the suite listens before sending `initialize`, to catch a
/// plugin that speaks first. The window is counted in the plugin's own CPU
/// time, not the clock's, so that a plugin starved on a busy machine is
/// heard as on an idle one: it lasts until the plugin's processes sit idle
/// (neither on a CPU nor waiting for one over [`QUIET_IDLE`]: blocked on
/// input, it has said what it would say first) and the host has handled
/// everything they wrote ([`PluginHandle::output_settled`]: the host's
/// reader may run after the plugin went idle), or until they used their
/// CPU budget (a twentieth of the initialize timeout, within 50-500 ms:
/// a plugin still computing), and at most the initialize timeout by the
/// clock. A process that cannot be measured gets the budget by the clock.
/// A plugin that speaks later still fails
/// `handshake.silent_before_initialize`: the host's handshake kills it for
/// a message before the `initialize` answer.
#[derive(Debug, Clone, Copy)]
struct QuietWindow {
    /// The plugin's CPU time the window lasts at most.
    cpu_budget: Duration,
    /// The clock's time it lasts at most.
    cap: Duration,
}

/// The shortest quiet window.
const QUIET_MIN: Duration = Duration::from_millis(50);
/// How long the plugin must use no CPU to end the window early (twice the
/// 10 ms clock tick `/proc` counts CPU time in, sampled twice).
const QUIET_IDLE: Duration = Duration::from_millis(20);

impl QuietWindow {
    fn for_timeouts(t: &Timeouts) -> QuietWindow {
        let cpu_budget = (t.initialize / 20).clamp(QUIET_MIN, Duration::from_millis(500));
        QuietWindow {
            cpu_budget,
            cap: t.initialize.max(cpu_budget),
        }
    }

    /// Listen until the window ends (see [`QuietWindow`]) or something
    /// arrived.
    async fn listen(self, session: &PluginHandle, rx: &tokio::sync::broadcast::Receiver<Value>) {
        let began = tokio::time::Instant::now();
        let cap = began + self.cap;
        tokio::time::sleep(QUIET_MIN.min(self.cpu_budget)).await;
        let pid = session.pid();
        let usage = || pid.and_then(kaged_host_core::probe::tree_usage);
        let Some(first) = usage() else {
            // Gone, or not measurable: the budget by the clock.
            tokio::time::sleep_until(began + self.cpu_budget).await;
            return;
        };
        let mut idle_samples = 0;
        while tokio::time::Instant::now() < cap && rx.is_empty() {
            let before = usage();
            tokio::time::sleep(QUIET_IDLE / 2).await;
            let after = usage();
            let (Some(b), Some(a)) = (before, after) else {
                // Gone: whatever it wrote is on its way; wait till handled.
                while !session.output_settled()
                    && rx.is_empty()
                    && tokio::time::Instant::now() < cap
                {
                    tokio::time::sleep(QUIET_IDLE / 2).await;
                }
                return;
            };
            if a.cpu.saturating_sub(first.cpu) >= self.cpu_budget {
                return;
            }
            // On a CPU or waiting for one (a starved plugin uses no CPU
            // yet has not had its say), or in disk I/O (a starting
            // interpreter reading its modules): not idle.
            if a.busy() == b.busy() && a.active_threads == 0 {
                idle_samples += 1;
            } else {
                idle_samples = 0;
            }
            // Idle, and what it wrote before going idle reached `rx`.
            if idle_samples >= 2 && session.output_settled() {
                return;
            }
        }
    }
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
}

/// Why `launch.starts` is skipped (and no session can be had) when
/// `command[0]` cannot be started.
pub(crate) const NOT_STARTED: &str = "the command cannot be started (see launch.command_exists)";

/// Start the primary spawn and make it the shared session when its
/// handshake passed; `None` when `command[0]` cannot be started (then no
/// session can be had).
pub(crate) async fn start(ctx: &RunContext, sessions: &mut Sessions) -> Option<Primary> {
    if ctx.command().is_err() {
        sessions.adopt(Mode::Unavailable(NOT_STARTED.into()), None);
        return None;
    }
    let started = Instant::now();
    let mark = ctx.audit.len();
    let t = sessions.new_transcript();
    let quiet = QuietWindow::for_timeouts(&ctx.timeouts);
    let (mut primary, session) = match ctx.host(t.clone()).launch_lenient(&ctx.dir).await {
        Err(e) => (Primary::failed(describe_launch(&e), t), None),
        Ok(session) => handshake(ctx, session, t, quiet, mark).await,
    };
    primary.started = started;
    primary.launch_events = ctx.audit.since(mark);
    let shared = session.map(|s| (s, primary.transcript.clone()));
    sessions.adopt(mode_for(&primary), shared);
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
    quiet.listen(&session, &rx).await;
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
        }
    }

    /// The process exited before answering `initialize`.
    pub fn exited_at_once(&self) -> bool {
        matches!(self.outcome, Some(Err(HandshakeError::Exited)))
    }

    /// How the process exited at once, with its last stderr lines.
    pub fn exit_description(&self) -> String {
        let tail: Vec<&String> = self
            .stderr
            .iter()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!(
            "exits at once ({}) before answering initialize; last stderr: {}",
            describe_exit(self.exit.map(|e| (e.code, e.signal))),
            if tail.is_empty() {
                "(none)".to_string()
            } else {
                tail.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(" | ")
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
