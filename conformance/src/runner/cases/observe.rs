//! Whole-run observations, reported last: what the host audited (stdout
//! noise, oversize lines, storage denials, notifications) and what the
//! plugin wrote to stderr, over every spawn of the run. Their
//! `audit_events` are the matching events of the whole run.

use kaged_host_sim::audit::{AuditEvent, AuditRecord};
use kaged_host_sim::transcript::Direction;
use serde_json::Value;

use super::{Suite, Verdict};

pub(crate) async fn run(suite: &mut Suite<'_>) {
    let Some(m) = suite.manifest.clone() else {
        return;
    };
    // Storage requests the plugin sent last may still be with the broker.
    let _ = suite.in_flight.settle(suite.timeouts().request).await;
    let all = suite.audit.events();
    let of = |e: AuditEvent| -> Vec<AuditRecord> {
        all.iter().filter(|r| r.event == e).cloned().collect()
    };

    let noise = of(AuditEvent::StdoutNoise);
    let v = match noise.first() {
        None => Verdict::pass("no non-JSON line on stdout during the run"),
        Some(first) => Verdict::fail(format!(
            "expected: only JSON-RPC on stdout; actual: {} non-JSON line(s), first: {:?} (plugin.stdout_noise)",
            noise.len(),
            first.get("line").as_str().unwrap_or_default()
        )),
    };
    observed(suite, "handshake.no_stdout_noise", noise, v);

    let big = of(AuditEvent::OversizeMessage);
    let v = match big.first() {
        None => Verdict::pass("no line over 4 MiB during the run"),
        Some(first) => Verdict::fail(format!(
            "expected: no line over 4 MiB; actual: a line of at least {} bytes (protocol.oversize_message, plugin killed)",
            first.get("length")
        )),
    };
    observed(suite, "protocol.no_oversize_lines", big, v);

    let stderr_rpc: Vec<String> = suite
        .all_transcripts
        .iter()
        .flat_map(|t| t.records())
        .filter(|r| r.dir == Direction::PluginStderr)
        .filter_map(|r| r.msg.as_str().map(str::to_string))
        .filter(|line| looks_like_jsonrpc(line))
        .collect();
    let v = match stderr_rpc.first() {
        None => Verdict::pass("no JSON-RPC message on stderr during the run"),
        Some(first) => Verdict::fail(format!(
            "expected: logs only on stderr; actual: {} JSON-RPC message(s), first: {}",
            stderr_rpc.len(),
            kaged_host_sim::transcript::cut(first, 200)
        )),
    };
    observed(suite, "protocol.no_jsonrpc_on_stderr", Vec::new(), v);

    let denied = of(AuditEvent::StorageDenied);
    let v = match denied.first() {
        None => Verdict::pass("no storage access was denied during the run"),
        Some(first) => Verdict::fail(format!(
            "expected: no denied storage access; actual: {} denial(s), first: {}",
            denied.len(),
            Value::Object(first.data.clone())
        )),
    };
    observed(suite, "storage.no_denials", denied, v);

    let notes = of(AuditEvent::Notification);
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
    observed(suite, "notifications.declared_only", undeclared, v);

    let flood = of(AuditEvent::NotificationFlood);
    let v = match flood.first() {
        None => Verdict::pass("no notification flood"),
        Some(first) => Verdict::fail(format!(
            "expected: at most {} notifications per second; actual: {} per window (plugin.notification_flood; the excess was dropped)",
            first.get("limit_per_sec"),
            first.get("rate")
        )),
    };
    observed(suite, "notifications.no_flood", flood, v);
}

fn observed(suite: &mut Suite<'_>, id: &str, events: Vec<AuditRecord>, v: Verdict) {
    if let Some(mut scope) = suite.begin(id, id) {
        scope.wires.clear();
        scope.events = Some(events);
        suite.end(scope, v);
    }
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
