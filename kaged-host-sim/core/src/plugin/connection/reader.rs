//! The read loop: one frame at a time, classified and dispatched without
//! ever awaiting a handler or the writer.

use std::sync::Arc;
use std::time::Instant;

use kaged_plugin_protocol::codec::{encode_line, Frame, LineDecoder, LineReader, MAX_LINE_BYTES};
use kaged_plugin_protocol::{
    methods, ErrorCode, MessageError, Notification, RateLimitedParams, Request, Response, RpcError,
    RpcMessage, StorageMethod,
};
use serde_json::{json, Value};
use tokio::io::{AsyncRead, BufReader};

use std::sync::atomic::Ordering;

use super::pending::Completion;
use super::ratelimit::Verdict;
use super::shared::lock;
use super::stdout_progress::Counted;
use super::{Fatal, Phase, Shared};
use crate::observe::audit::AuditEvent;
use crate::observe::transcript::Direction;
use crate::observe::violation::Violation;
use crate::requests::handler::deny_unavailable_storage;

use crate::bounds::MAX_PLUGIN_REQUESTS_IN_FLIGHT;
pub use crate::bounds::NOISE_CHARS;

pub(super) async fn read_loop<R: AsyncRead + Unpin>(shared: Arc<Shared>, reader: R) {
    // An endless line is caught as it passes the limit, not at its newline
    // (which may never come), whether or not a request is pending.
    let reader = Counted::new(reader, shared.stdout.clone());
    let mut lines = LineReader::with_decoder(BufReader::new(reader), LineDecoder::new().at_once());
    loop {
        match lines.next_frame().await {
            Ok(Some(Frame::Line(line))) => {
                if !handle_line(&shared, &line) {
                    // Fatal: the session kills the plugin and closes us.
                    return;
                }
                shared
                    .stdout
                    .handled_all_but(lines.get_ref().buffer().len());
            }
            Ok(Some(Frame::Oversize { len })) => {
                shared.cfg.transcript.record_value(
                    Direction::PluginToHost,
                    Value::String(format!("<oversize line: {len} bytes discarded>")),
                );
                let detail = format!(
                    "a line passed the {MAX_LINE_BYTES}-byte limit ({len} bytes read, no newline yet)"
                );
                shared.audit(
                    AuditEvent::OversizeMessage,
                    json!({"length": len, "limit": MAX_LINE_BYTES}),
                );
                shared.fail(Fatal {
                    event: AuditEvent::OversizeMessage,
                    reason: "oversize_message".into(),
                    detail,
                });
                return;
            }
            Ok(None) => break,
            Err(e) => {
                tracing::debug!(plugin = %shared.plugin, error = %e, "stdout read failed");
                break;
            }
        }
    }
    shared.mark_closed();
}

/// Audit a protocol violation: its type, why (`detail`) and the line the
/// plugin sent (`line`, cut to [`NOISE_CHARS`] characters), so a report
/// can quote what broke the rule; kill the plugin when it is fatal.
fn violation(shared: &Shared, kind: Violation, detail: String, phase: Phase, line: &[u8]) -> bool {
    let fatal = phase != Phase::Ready || kind.is_fatal();
    tracing::warn!(plugin = %shared.plugin, violation = kind.as_str(), "{detail}");
    let full = String::from_utf8_lossy(line);
    let quoted: String = full.chars().take(NOISE_CHARS).collect();
    shared.audit(
        AuditEvent::ProtocolViolation,
        json!({"violation_type": kind.as_str(), "detail": detail, "line": quoted,
               "truncated": quoted.len() < full.len()}),
    );
    if fatal {
        shared.fail(Fatal {
            event: AuditEvent::ProtocolViolation,
            reason: kind.as_str().to_string(),
            detail,
        });
    }
    !fatal
}

/// An object with a result or an error but no id and no method: an answer
/// that answers nothing (the shape a reply to a notification takes).
fn is_idless_answer(v: &Value) -> bool {
    v.get("id").is_none()
        && v.get("method").is_none()
        && (v.get("result").is_some() || v.get("error").is_some())
}

/// Handle one stdout line; `false` when the plugin must be killed.
fn handle_line(shared: &Arc<Shared>, line: &[u8]) -> bool {
    shared.cfg.transcript.record(Direction::PluginToHost, line);
    // Parsed once: the tap (only when someone listens), the id-less check
    // and the classification share the one `Value`.
    let tapped = shared.inbound.receiver_count() > 0;
    let parsed = serde_json::from_slice::<Value>(line);
    if tapped {
        let tap = match &parsed {
            Ok(v) => v.clone(),
            Err(_) => Value::String(String::from_utf8_lossy(line).into_owned()),
        };
        let _ = shared.inbound.send(tap);
    }
    let phase = shared.phase();
    let msg = match parsed {
        Ok(v) if phase == Phase::Ready && is_idless_answer(&v) => {
            return anonymous_answer(shared, "an answer without an id", line);
        }
        Ok(v) => RpcMessage::from_value(v),
        Err(e) => Err(MessageError::Parse(e.to_string())),
    };
    let msg = match msg {
        Ok(m) => m,
        Err(MessageError::Parse(_)) => {
            let full = String::from_utf8_lossy(line);
            let text: String = full.chars().take(NOISE_CHARS).collect();
            let truncated = text.len() < full.len();
            tracing::warn!(plugin = %shared.plugin, "non-JSON line on stdout: {text}");
            shared.audit(
                AuditEvent::StdoutNoise,
                json!({"line": text, "truncated": truncated, "length": line.len()}),
            );
            return true;
        }
        Err(e) => return bad_message(shared, e, phase, line),
    };
    // Answers to lines sent through the raw channel are only tapped; an
    // answer to one of our pending requests is never "speaking first".
    let msg = match msg {
        RpcMessage::Response(r) if shared.raw.answers_request(&r.id) => return true,
        RpcMessage::Response(r) => match r.id.as_u64() {
            Some(n) => match shared.pending.complete(n, r) {
                Completion::Delivered => return true,
                Completion::Late => {
                    tracing::debug!(plugin = %shared.plugin, id = n, "late answer dropped");
                    return true;
                }
                Completion::Unknown(r) => RpcMessage::Response(r),
            },
            None => RpcMessage::Response(r),
        },
        other => other,
    };
    match (phase, msg) {
        (Phase::Spawned, m) => violation(
            shared,
            Violation::MessageBeforeInitialize,
            format!("{} sent before initialize", describe(&m)),
            phase,
            line,
        ),
        (Phase::InitializeSent, m @ (RpcMessage::Request(_) | RpcMessage::Notification(_))) => {
            violation(
                shared,
                Violation::MessageBeforeInitialized,
                format!("{} sent before the handshake completed", describe(&m)),
                phase,
                line,
            )
        }
        (Phase::Ready, RpcMessage::Response(r)) if r.id.is_null() => {
            anonymous_answer(shared, "an answer with id null", line)
        }
        (phase, RpcMessage::Response(r)) => violation(
            shared,
            Violation::UnknownResponseId,
            format!("answer with id {}, which is not pending", r.id),
            phase,
            line,
        ),
        (_, RpcMessage::Request(r)) => {
            request(shared, r, line);
            true
        }
        (_, RpcMessage::Notification(n)) => {
            notification(shared, n);
            true
        }
    }
}

/// An answer with id null or none after the handshake: fine when a raw
/// line could have prompted it (its probe judges it), otherwise it answers
/// a notification.
fn anonymous_answer(shared: &Shared, what: &str, line: &[u8]) -> bool {
    if shared.raw.answers_anonymously() {
        return true;
    }
    violation(
        shared,
        Violation::AnswerToNotification,
        format!("{what}, which answers no request: notifications get no answer"),
        Phase::Ready,
        line,
    )
}

fn describe(m: &RpcMessage) -> String {
    match m {
        RpcMessage::Request(r) => format!("request {:?}", r.method),
        RpcMessage::Notification(n) => format!("notification {:?}", n.method),
        RpcMessage::Response(r) => format!("response with id {}", r.id),
    }
}

fn bad_message(shared: &Shared, e: MessageError, phase: Phase, raw: &[u8]) -> bool {
    let kind = match e {
        MessageError::Batch => Violation::Batch,
        _ => Violation::InvalidMessage,
    };
    if phase != Phase::Ready {
        return violation(
            shared,
            kind,
            format!("{e} (before the handshake completed)"),
            phase,
            raw,
        );
    }
    if kind == Violation::Batch && shared.raw.answers_batch() {
        return true;
    }
    if let MessageError::Invalid { id: Some(id), .. } = &e {
        if let Some(n) = id.as_u64() {
            let err = RpcError::new(
                ErrorCode::InternalError,
                format!("the plugin sent a malformed answer: {e}"),
            );
            if matches!(
                shared.pending.complete(n, Response::err(id.clone(), err)),
                Completion::Delivered
            ) {
                return violation(shared, kind, e.to_string(), phase, raw);
            }
        }
    }
    if let Ok(line) = encode_line(&e.answer()) {
        shared.send_encoded(line);
    }
    violation(shared, kind, e.to_string(), phase, raw)
}

fn request(shared: &Arc<Shared>, r: Request, raw: &[u8]) {
    let checked = lock(&shared.request_ids).next(&r.id);
    if let Err(detail) = checked {
        violation(
            shared,
            Violation::RequestIdNotIncreasing,
            detail,
            Phase::Ready,
            raw,
        );
    }
    if !shared.cfg.storage_available && StorageMethod::parse(&r.method).is_some() {
        let e = deny_unavailable_storage(
            shared.cfg.handler.as_ref(),
            &shared.request_context(),
            &r,
            "storage is not available: the host said storage_available: false in initialize",
        );
        if let Ok(line) = encode_line(&Response::err(r.id, e)) {
            shared.send_encoded(line);
        }
        return;
    }
    // Bounded: past bounds::MAX_PLUGIN_REQUESTS_IN_FLIGHT the request is
    // answered -32005 at once, and the flood is audited once.
    if shared.requests_in_flight.fetch_add(1, Ordering::SeqCst) >= MAX_PLUGIN_REQUESTS_IN_FLIGHT {
        shared.requests_in_flight.fetch_sub(1, Ordering::SeqCst);
        if !shared.request_flood.swap(true, Ordering::SeqCst) {
            tracing::warn!(plugin = %shared.plugin, "request flood: answering -32005 past {MAX_PLUGIN_REQUESTS_IN_FLIGHT} in flight");
            shared.audit(
                AuditEvent::RequestFlood,
                json!({"limit": MAX_PLUGIN_REQUESTS_IN_FLIGHT}),
            );
        }
        let e = RpcError::new(
            ErrorCode::ResourceBusy,
            format!(
                "the host is answering {MAX_PLUGIN_REQUESTS_IN_FLIGHT} requests of this plugin already: retry when one is answered"
            ),
        );
        if let Ok(line) = encode_line(&Response::err(r.id, e)) {
            shared.send_encoded(line);
        }
        return;
    }
    let fut = shared
        .cfg
        .handler
        .handle(shared.request_context(), r.clone());
    let shared = shared.clone();
    tokio::spawn(async move {
        let resp = match fut.await {
            Ok(v) => Response::ok(r.id, v),
            Err(e) => Response::err(r.id, e),
        };
        if shared.requests_in_flight.fetch_sub(1, Ordering::SeqCst)
            <= MAX_PLUGIN_REQUESTS_IN_FLIGHT / 2
        {
            shared.request_flood.store(false, Ordering::SeqCst);
        }
        match encode_line(&resp) {
            Ok(line) => {
                shared.send_encoded(line);
            }
            Err(e) => tracing::warn!(plugin = %shared.plugin, error = %e, "cannot encode answer"),
        }
    });
}

fn notification(shared: &Arc<Shared>, n: Notification) {
    let verdict = shared.limiter().check(Instant::now());
    match verdict {
        Verdict::Accept => {
            shared.cfg.audit.emit_with(
                AuditEvent::Notification,
                &shared.plugin,
                || json!({"notification_type": n.method}),
            );
            if shared.notifications.receiver_count() > 0 {
                let _ = shared.notifications.send(n);
            }
        }
        Verdict::Drop { first: false, .. } => {}
        Verdict::Drop { first: true, rate } => {
            let limit = shared.cfg.timeouts.notification_limit;
            tracing::warn!(plugin = %shared.plugin, "notification flood: dropping past {limit} per window");
            shared.audit(
                AuditEvent::NotificationFlood,
                json!({"rate": rate, "limit_per_sec": limit}),
            );
            let window = shared.cfg.timeouts.notification_window;
            let shared = shared.clone();
            tokio::spawn(async move {
                tokio::time::sleep(window).await;
                let dropped = shared.limiter().end_episode();
                let params = RateLimitedParams {
                    limit_per_sec: limit,
                    dropped,
                };
                let note = Notification::new(
                    methods::SYSTEM_RATE_LIMITED,
                    serde_json::to_value(params).ok(),
                );
                if let Ok(line) = encode_line(&note) {
                    shared.send_encoded(line);
                }
            });
        }
    }
}
