//! Whole-run observations of the wire discipline: what the host audited as
//! `plugin.protocol_violation` over every spawn of the run, one case per
//! kind (answers to notifications, answers with unknown ids, batches, the
//! plugin's own request ids).

use kaged_host_core::audit::{AuditEvent, AuditRecord, Violation};

use crate::runner::judge::verdict::Verdict;
use crate::runner::session::observations::Observations;

/// The run's `plugin.protocol_violation` records of `kind`.
fn of_kind(o: &Observations, kind: Violation) -> Vec<AuditRecord> {
    o.of(AuditEvent::ProtocolViolation)
        .into_iter()
        .filter(|r| r.get("violation_type").as_str() == Some(kind.as_str()))
        .collect()
}

/// Pass with `pass`, or fail with `expected` and the first record's detail.
fn judge(
    o: &Observations,
    kind: Violation,
    pass: String,
    expected: &str,
) -> (Verdict, Vec<AuditRecord>) {
    let found = of_kind(o, kind);
    let v = match found.first() {
        None => Verdict::pass(pass),
        Some(first) => Verdict::fail(format!(
            "expected: {expected}; actual: {} time(s), first: {}",
            found.len(),
            first.describe()
        )),
    };
    (v, found)
}

/// `protocol.no_answer_to_notifications`.
pub(crate) fn no_answer_to_notifications(o: &Observations) -> (Verdict, Vec<AuditRecord>) {
    judge(
        o,
        Violation::AnswerToNotification,
        "no answer to a notification during the run".into(),
        "no answer to a notification (initialized, shutdown, system.rate_limited)",
    )
}

/// `protocol.no_unknown_response_ids`.
pub(crate) fn no_unknown_response_ids(o: &Observations) -> (Verdict, Vec<AuditRecord>) {
    judge(
        o,
        Violation::UnknownResponseId,
        "every answer carried the id of a request the host sent".into(),
        "answers only with the ids of requests the host sent",
    )
}

/// `protocol.no_unprompted_batches`.
pub(crate) fn no_unprompted_batches(o: &Observations) -> (Verdict, Vec<AuditRecord>) {
    judge(
        o,
        Violation::Batch,
        "no batch from the plugin during the run".into(),
        "no JSON array from the plugin (the suite's own batch probe is judged by protocol.batch_rejected)",
    )
}

/// `protocol.request_ids_monotonic`: skipped when the plugin sent no
/// request of its own.
pub(crate) fn request_ids_monotonic(o: &Observations) -> (Verdict, Vec<AuditRecord>) {
    let sent = o.plugin_requests();
    if sent == 0 {
        return (
            Verdict::skip("the plugin sent no request of its own during the run"),
            Vec::new(),
        );
    }
    judge(
        o,
        Violation::RequestIdNotIncreasing,
        format!("{sent} request(s) from the plugin, ids increasing from 1 on each spawn"),
        "integer ids increasing from 1 on each spawn",
    )
}
