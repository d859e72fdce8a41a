//! The primary spawn's handshake and the `handshake.*` cases. Every check
//! is made on the plugin's raw `initialize` answer, so that one broken
//! field does not hide the others (the host stops at the first); the
//! host's own verdict is shown beside it.

use std::collections::BTreeSet;
use std::time::Duration;

use kaged_host_sim::audit::AuditRecord;
use kaged_host_sim::handshake::{canonical_capability, HandshakeError, HandshakeInfo};
use kaged_host_sim::process::ExitInfo;
use kaged_host_sim::session::PluginSession;
use kaged_host_sim::time::Timeouts;
use kaged_host_sim::transcript::Transcript;
use kaged_plugin_sdk::protocol::{methods, HookName, InitializeResult, API_VERSION};
use serde_json::Value;

use super::sessions::{describe_exit, retire};
use super::suite::Mode;
use super::{Suite, Verdict};

/// How long the suite listens before sending `initialize`, to catch a
/// plugin that speaks first: a twentieth of the initialize timeout, within
/// 50-500 ms.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QuietWindow(pub Duration);

impl QuietWindow {
    pub fn for_timeouts(t: &Timeouts) -> QuietWindow {
        QuietWindow(
            (t.initialize / 20).clamp(Duration::from_millis(50), Duration::from_millis(500)),
        )
    }
}

/// What the primary spawn showed.
pub(crate) struct Primary {
    pub launch_error: Option<String>,
    pub outcome: Option<Result<HandshakeInfo, HandshakeError>>,
    pub early: Vec<Value>,
    pub answer: Option<Value>,
    pub events: Vec<AuditRecord>,
    pub exit: Option<ExitInfo>,
    pub stderr: Vec<String>,
    pub transcript: Transcript,
    pub session: Option<PluginSession>,
}

impl Primary {
    pub fn failed(error: String, transcript: Transcript) -> Primary {
        Primary {
            launch_error: Some(error),
            outcome: None,
            early: Vec::new(),
            answer: None,
            events: Vec::new(),
            exit: None,
            stderr: Vec::new(),
            transcript,
            session: None,
        }
    }

    /// Listen for the quiet window, then run the host's handshake.
    pub async fn handshake(
        suite: &Suite<'_>,
        session: PluginSession,
        transcript: Transcript,
        quiet: QuietWindow,
    ) -> Primary {
        let mark = suite.audit.len();
        let mut rx = session.raw().inbound();
        tokio::time::sleep(quiet.0).await;
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
            launch_error: None,
            early,
            answer,
            events: suite.audit.since(mark),
            exit: session.exit_info(),
            stderr: session.stderr_tail(),
            transcript,
            outcome: Some(outcome),
            session: None,
        };
        if ok {
            Primary {
                session: Some(session),
                ..primary
            }
        } else {
            retire(session).await;
            primary
        }
    }

    pub fn exited_at_once(&self) -> bool {
        matches!(self.outcome, Some(Err(HandshakeError::Exited)))
    }

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

    fn result(&self) -> Option<InitializeResult> {
        serde_json::from_value(self.answer.as_ref()?.get("result")?.clone()).ok()
    }

    fn error(&self) -> Option<&HandshakeError> {
        self.outcome.as_ref()?.as_ref().err()
    }
}

/// Decide the mode and report every `handshake.*` case but the stdout
/// observation (reported at the end of the run).
pub(crate) async fn run(suite: &mut Suite<'_>) {
    let Some(mut p) = suite.primary.take() else {
        return;
    };
    suite.mode = mode_for(&p);
    if let Some(s) = p.session.take() {
        suite.shared = Some((s, p.transcript.clone()));
    }
    let Some(m) = suite.manifest.clone() else {
        return;
    };
    let cases: Vec<(&str, Verdict)> = if let Some(e) = &p.launch_error {
        let why = format!("the plugin could not be started: {e}");
        [
            "silent_before_initialize",
            "answers_in_time",
            "well_formed",
            "name_matches",
            "version_matches",
            "api_version_matches",
            "methods_within_manifest",
            "methods_complete",
            "capabilities_within_manifest",
        ]
        .into_iter()
        .map(|c| (c, Verdict::skip(why.clone())))
        .collect()
    } else {
        let r = p.result();
        let no_result = || {
            Verdict::skip("no well-formed initialize result (see handshake.answers_in_time and handshake.well_formed)")
        };
        let host = p
            .error()
            .map(|e| format!(" (host: {e})"))
            .unwrap_or_default();
        let cmp = |what: &str, expected: String, got: Option<String>| match got {
            None => no_result(),
            Some(g) if g == expected => Verdict::pass(format!("{what} {g:?}")),
            Some(g) => Verdict::fail(format!(
                "expected: {what} {expected:?}; actual: {g:?}{host}"
            )),
        };
        let declared = m.declared_methods();
        let listed: Option<Vec<String>> = r.as_ref().map(|r| r.methods.clone());
        let extra = match (&p.outcome, &listed) {
            (Some(Ok(info)), _) => Some(info.extra_methods.clone()),
            (_, Some(l)) => Some(
                l.iter()
                    .filter(|x| {
                        !declared.contains(x)
                            && !methods::SYSTEM_METHODS.contains(&x.as_str())
                            && HookName::from_method(x).is_none()
                    })
                    .cloned()
                    .collect(),
            ),
            _ => None,
        };
        let missing = match (&p.outcome, &listed) {
            (Some(Ok(info)), _) => Some(info.unavailable_methods.clone()),
            (_, Some(l)) => Some(
                declared
                    .iter()
                    .filter(|d| !l.contains(d))
                    .cloned()
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        };
        let allowed: BTreeSet<String> = m
            .capability_strings()
            .iter()
            .map(|c| canonical_capability(c))
            .collect();
        vec![
            ("silent_before_initialize", silent(&p)),
            ("answers_in_time", answers(&p)),
            ("well_formed", well_formed(&p)),
            ("name_matches", cmp("name", m.name.clone(), r.as_ref().map(|r| r.name.clone()))),
            ("version_matches", cmp("version", m.version.clone(), r.as_ref().map(|r| r.version.clone()))),
            ("api_version_matches", cmp("api_version", API_VERSION.to_string(), r.as_ref().map(|r| r.api_version.to_string()))),
            ("methods_within_manifest", match extra {
                None => no_result(),
                Some(x) if x.is_empty() => Verdict::pass("every listed method is declared"),
                Some(x) => Verdict::fail(format!("expected: only declared methods; actual: {x:?} listed but not declared (the host ignores them)")),
            }),
            ("methods_complete", match missing {
                None => no_result(),
                Some(x) if x.is_empty() => Verdict::pass(format!("all {} declared methods and tools listed", declared.len())),
                Some(x) => Verdict::fail(format!("expected: every declared method and tool listed; actual: {x:?} missing (the host marks them unavailable)")),
            }),
            ("capabilities_within_manifest", match &r {
                None => no_result(),
                Some(r) => {
                    let excess: Vec<&String> = r.capabilities_used.iter().filter(|c| !allowed.contains(&canonical_capability(c))).collect();
                    if excess.is_empty() {
                        Verdict::pass(format!("capabilities_used {:?} within the manifest", r.capabilities_used))
                    } else {
                        Verdict::fail(format!("expected: capabilities_used within {:?}; actual: {excess:?} not in the manifest{host}", m.capability_strings()))
                    }
                }
            }),
        ]
    };
    for (name, verdict) in cases {
        let id = format!("handshake.{name}");
        if let Some(mut scope) = suite.begin(&id, id.clone()) {
            scope.wires.clear();
            scope.touch_from(&p.transcript, 0);
            scope.events = Some(p.events.clone());
            suite.end(scope, verdict);
        }
    }
}

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

fn silent(p: &Primary) -> Verdict {
    if let Some(first) = p.early.first() {
        return Verdict::fail(format!(
            "expected: nothing before initialize; actual: the plugin sent {first}"
        ));
    }
    match p.error() {
        Some(HandshakeError::ProtocolViolation { reason, detail }) if reason.starts_with("message_before_initialize") => {
            Verdict::fail(format!("expected: nothing before the handshake completes; actual: {detail} (host: {reason}, plugin killed)"))
        }
        _ => Verdict::pass("nothing was sent before initialize"),
    }
}

fn answers(p: &Primary) -> Verdict {
    match p.error() {
        Some(HandshakeError::Timeout(d)) => Verdict::fail(format!("expected: an initialize answer within {d:?}; actual: none (plugin.initialize_timeout, plugin killed)")),
        Some(HandshakeError::Exited) => Verdict::skip("the plugin exited before answering (see launch.starts)"),
        _ if p.answer.is_some() => Verdict::pass("initialize answered in time"),
        Some(e) => Verdict::skip(format!("the plugin was killed before it answered: {e}")),
        None => Verdict::skip("no initialize answer was seen"),
    }
}

fn well_formed(p: &Primary) -> Verdict {
    match p.error() {
        Some(HandshakeError::Malformed(m)) => return Verdict::fail(format!("expected: an initialize result (name, version, api_version, methods, notifications, capabilities_used); actual: {m}")),
        Some(HandshakeError::ErrorAnswer(e)) => return Verdict::fail(format!("expected: an initialize result; actual: an error answer {} {:?}", e.code, e.message)),
        Some(HandshakeError::ProtocolViolation { reason, detail }) if !reason.starts_with("message_before_initialize") => {
            return Verdict::fail(format!("expected: well-formed JSON-RPC; actual: {detail} (host: {reason})"))
        }
        _ => {}
    }
    match (&p.answer, p.result()) {
        (None, _) => Verdict::skip("no initialize answer was seen"),
        (Some(a), None) => Verdict::fail(format!(
            "expected: an initialize result; actual: {}",
            kaged_host_sim::transcript::cut(&a.to_string(), 300)
        )),
        (Some(_), Some(_)) => Verdict::pass("the initialize result is well-formed"),
    }
}
