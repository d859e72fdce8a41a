//! What ended a case ([`EndedBy`]), read from what it saw: its wire
//! records and its audit events. The case's last request is the wait
//! that decided it: an answer to it, a stray answer after it (an answer
//! to nothing the host sent), the plugin's exit, or none of these (the
//! budget ran out). A case that sent no request ended on the plugin's
//! exit, the host's kill (a budget ran out), or without waiting.

use kaged_host_core::audit::AuditEvent;
use kaged_host_core::transcript::Direction;
use kaged_host_core::{AuditRecord, TranscriptRecord};
use serde_json::Value;

use crate::report::EndedBy;

/// What ended the case whose wire is `records` and audit `events`.
pub(crate) fn ended_by(records: &[TranscriptRecord], events: &[AuditRecord]) -> EndedBy {
    let exited = events
        .iter()
        .any(|e| matches!(e.event, AuditEvent::Exited | AuditEvent::Crashed));
    let killed = events.iter().any(|e| {
        matches!(
            e.event,
            AuditEvent::Killed | AuditEvent::InitializeTimeout | AuditEvent::HookTimeout
        )
    });
    let last_request = records
        .iter()
        .rposition(|r| r.dir == Direction::HostToPlugin && is_request(&r.msg));
    let Some(at) = last_request else {
        return match (exited, killed) {
            (_, true) => EndedBy::Timeout,
            (true, false) => EndedBy::Exit,
            (false, false) if records.is_empty() => EndedBy::NoWait,
            (false, false) => EndedBy::Answer,
        };
    };
    let id = records[at].msg.get("id").cloned().unwrap_or(Value::Null);
    let sent: Vec<&Value> = records[..=at]
        .iter()
        .filter(|r| r.dir == Direction::HostToPlugin)
        .filter_map(|r| r.msg.get("id"))
        .collect();
    let after = records[at + 1..]
        .iter()
        .filter(|r| r.dir == Direction::PluginToHost);
    for r in after {
        if is_response(&r.msg) && r.msg.get("id") == Some(&id) {
            return EndedBy::Answer;
        }
        let stray = r.msg.is_array()
            || (is_response(&r.msg)
                && r.msg
                    .get("id")
                    .is_none_or(|i| i.is_null() || !sent.contains(&i)));
        if stray {
            return EndedBy::StrayAnswer;
        }
    }
    if exited && !killed {
        EndedBy::Exit
    } else {
        EndedBy::Timeout
    }
}

fn is_request(v: &Value) -> bool {
    v.get("method").is_some() && v.get("id").is_some_and(|i| !i.is_null())
}

fn is_response(v: &Value) -> bool {
    v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(dir: Direction, msg: Value) -> TranscriptRecord {
        TranscriptRecord { seq: 0, dir, msg }
    }

    fn event(event: AuditEvent) -> AuditRecord {
        AuditRecord {
            ts: std::time::SystemTime::UNIX_EPOCH,
            event,
            plugin: "p".into(),
            data: serde_json::Map::new(),
        }
    }

    #[test]
    fn the_last_request_decides() {
        let ask = |id: i64| {
            rec(
                Direction::HostToPlugin,
                json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
            )
        };
        let answer = |id: Value| {
            rec(
                Direction::PluginToHost,
                json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            )
        };
        assert_eq!(ended_by(&[ask(1), answer(json!(1))], &[]), EndedBy::Answer);
        assert_eq!(
            ended_by(&[ask(1), answer(json!(1)), ask(2)], &[]),
            EndedBy::Timeout
        );
        assert_eq!(
            ended_by(&[ask(1), answer(json!(7))], &[]),
            EndedBy::StrayAnswer
        );
        assert_eq!(
            ended_by(&[ask(1), answer(Value::Null)], &[]),
            EndedBy::StrayAnswer
        );
        assert_eq!(
            ended_by(&[ask(1)], &[event(AuditEvent::Crashed)]),
            EndedBy::Exit
        );
        assert_eq!(
            ended_by(&[ask(1)], &[event(AuditEvent::Killed)]),
            EndedBy::Timeout
        );
        assert_eq!(ended_by(&[], &[]), EndedBy::NoWait);
        assert_eq!(ended_by(&[], &[event(AuditEvent::Exited)]), EndedBy::Exit);
    }
}
