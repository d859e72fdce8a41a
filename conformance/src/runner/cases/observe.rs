//! Whole-run observations, reported last: what the host audited (stdout
//! noise, oversize lines, storage denials, notifications) and what the
//! plugin wrote to stderr, over every spawn of the run. Each returns the
//! matching audit events of the whole run, which its case reports.

use kaged_host_core::audit::{AuditEvent, AuditRecord};
use kaged_host_core::STORAGE_UNAVAILABLE;
use serde_json::Value;

use crate::runner::judge::verdict::Verdict;
use crate::runner::session::observations::Observations;

/// `handshake.no_stdout_noise`: nothing but JSON-RPC on stdout.
pub(crate) fn no_stdout_noise(o: &Observations) -> (Verdict, Vec<AuditRecord>) {
    let noise = o.of(AuditEvent::StdoutNoise);
    let v = match noise.first() {
        None => Verdict::pass("no non-JSON line on stdout during the run"),
        Some(first) => Verdict::fail(format!(
            "expected: only JSON-RPC on stdout; actual: {} non-JSON line(s), first: {:?} (plugin.stdout_noise)",
            noise.len(),
            first.get("line").as_str().unwrap_or_default()
        )),
    };
    (v, noise)
}

/// `protocol.no_oversize_lines`: no line over 4 MiB.
pub(crate) fn no_oversize_lines(o: &Observations) -> (Verdict, Vec<AuditRecord>) {
    let big = o.of(AuditEvent::OversizeMessage);
    let v = match big.first() {
        None => Verdict::pass("no line over 4 MiB during the run"),
        Some(first) => Verdict::fail(format!(
            "expected: no line over 4 MiB; actual: a line of at least {} bytes (protocol.oversize_message, plugin killed)",
            first.get("length")
        )),
    };
    (v, big)
}

/// `protocol.no_jsonrpc_on_stderr`: no JSON-RPC message on stderr (no
/// audit event shows it).
pub(crate) fn no_jsonrpc_on_stderr(o: &Observations) -> (Verdict, Vec<AuditRecord>) {
    let stderr_rpc: Vec<&str> = o
        .stderr()
        .into_iter()
        .filter(|line| looks_like_jsonrpc(line))
        .collect();
    let v = match stderr_rpc.first() {
        None => Verdict::pass("no JSON-RPC message on stderr during the run"),
        Some(first) => Verdict::fail(format!(
            "expected: logs only on stderr; actual: {} JSON-RPC message(s), first: {}",
            stderr_rpc.len(),
            kaged_plugin_protocol::text::cut(first, 200)
        )),
    };
    (v, Vec::new())
}

/// `storage.no_denials`: no storage access was denied. Refusals because the
/// suite itself said `storage_available: false` (`handshake.initialize_variants`)
/// are the suite's doing and not counted.
pub(crate) fn no_denials(o: &Observations) -> (Verdict, Vec<AuditRecord>) {
    let (denied, unavailable): (Vec<AuditRecord>, Vec<AuditRecord>) = o
        .of(AuditEvent::StorageDenied)
        .into_iter()
        .partition(|r| r.get("reason").as_str() != Some(STORAGE_UNAVAILABLE));
    let v = match denied.first() {
        None if unavailable.is_empty() => Verdict::pass("no storage access was denied during the run"),
        None => Verdict::pass(format!(
            "no storage access was denied during the run ({} refused while the suite said storage_available: false, not counted)",
            unavailable.len()
        )),
        Some(first) => Verdict::fail(format!(
            "expected: no denied storage access; actual: {} denial(s), first: {}",
            denied.len(),
            Value::Object(first.data.clone())
        )),
    };
    (v, denied)
}

/// `notifications.declared_only`: every notification is of a type the
/// manifest declares.
pub(crate) fn declared_only(o: &Observations) -> (Verdict, Vec<AuditRecord>) {
    let m = &o.manifest;
    let notes = o.of(AuditEvent::Notification);
    let undeclared: Vec<AuditRecord> = notes
        .iter()
        .filter(|r| {
            let t = r.get("notification_type").as_str().unwrap_or_default();
            !m.notifications.iter().any(|n| n == t)
        })
        .cloned()
        .collect();
    let v = if undeclared.is_empty() {
        Verdict::pass(format!(
            "{} notification(s) seen, all declared",
            notes.len()
        ))
    } else {
        let mut types: Vec<&str> = undeclared
            .iter()
            .filter_map(|r| r.get("notification_type").as_str())
            .collect();
        types.dedup();
        Verdict::fail(format!(
            "expected: only {:?} (the manifest's notifications); actual: undeclared {types:?}",
            m.notifications
        ))
    };
    (v, undeclared)
}

/// `notifications.no_flood`: the host never dropped notifications for a
/// flood.
pub(crate) fn no_flood(o: &Observations) -> (Verdict, Vec<AuditRecord>) {
    let flood = o.of(AuditEvent::NotificationFlood);
    let v = match flood.first() {
        None => Verdict::pass("no notification flood"),
        Some(first) => Verdict::fail(format!(
            "expected: at most {} notifications per second; actual: {} per window (plugin.notification_flood; the excess was dropped)",
            first.get("limit_per_sec"),
            first.get("rate")
        )),
    };
    (v, flood)
}

/// A stderr line that is a JSON-RPC message (an object with `jsonrpc`, or
/// a batch of them).
fn looks_like_jsonrpc(line: &str) -> bool {
    match serde_json::from_str::<Value>(line.trim()) {
        Ok(Value::Object(o)) => o.contains_key("jsonrpc"),
        Ok(Value::Array(a)) => a.iter().any(|v| v.get("jsonrpc").is_some()),
        _ => false,
    }
}
