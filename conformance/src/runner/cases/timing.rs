//! `timing.margins`: no answer used more than half of its budget. A plugin
//! drifting towards a timeout is a warning before it is a failure.

use std::time::Duration;

use kaged_host_core::audit::{AuditEvent, AuditRecord};

use crate::runner::observations::Observations;
use crate::runner::verdict::Verdict;

/// The share of a budget an answer may use before it is a warning.
const MARGIN: f64 = 0.5;

/// `timing.margins`: every method, tool and hook answer of the run (the
/// host's `plugin.method_returned` and `plugin.hook.returned`, with
/// `duration_ms`) came within half of its budget (the request or hook
/// timeout at the run's time scale). Calls that ran into the timeout are
/// the failing case's business (`methods.answers`, `hooks.answers`), not
/// this one's.
pub(crate) fn margins(o: &Observations) -> (Verdict, Vec<AuditRecord>) {
    let mut slow: Vec<(AuditRecord, String)> = Vec::new();
    let mut judged = 0usize;
    for (event, budget, what) in [
        (AuditEvent::MethodReturned, o.request_budget, "method"),
        (AuditEvent::HookReturned, o.hook_budget, "hook"),
    ] {
        for r in o.of(event) {
            let Some(ms) = r.get("duration_ms").as_u64() else {
                continue;
            };
            let took = Duration::from_millis(ms);
            if took >= budget {
                continue; // no answer in time: a timeout, another case's failure
            }
            judged += 1;
            if took.as_secs_f64() > budget.as_secs_f64() * MARGIN {
                let name = r
                    .get(what)
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| what.to_string());
                slow.push((r, format!("{name} took {ms} ms of its {budget:?}")));
            }
        }
    }
    let v = if slow.is_empty() {
        Verdict::pass(format!(
            "all {judged} method and hook answers came within half of their budget"
        ))
    } else {
        let shown: Vec<&str> = slow.iter().take(5).map(|(_, s)| s.as_str()).collect();
        Verdict::fail(format!(
            "expected: every answer within half of its budget; actual: {} did not: {}",
            slow.len(),
            shown.join("; ")
        ))
    };
    (v, slow.into_iter().map(|(r, _)| r).collect())
}
