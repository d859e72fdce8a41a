//! `timing.margins`: no answer used more than half of its budget, nor more
//! than [`SLOW`] whatever the time scale. A plugin drifting towards a
//! timeout is a warning before it is a failure, and a handler that blocks
//! for seconds is seen at the spec's own budgets too (at scale 1 half of a
//! request is 15 s).

use std::time::Duration;

use kaged_host_core::audit::{AuditEvent, AuditRecord};
use kaged_plugin_protocol::methods::{self, SYSTEM_METHODS};

use crate::runner::judge::verdict::Verdict;
use crate::runner::session::observations::Observations;

/// The share of a budget an answer may use before it is a warning.
const MARGIN: f64 = 0.5;

/// The longest a method, tool or hook answer may take at any time scale
/// before it is a warning: an agent waits on every hook and tool call in
/// its turn. System methods (`config.update`, `ping`, `projects.*`) are
/// held to half their budget only: the first `config.update` comes right
/// after start-up, while a runtime is still warming (the protocol's
/// `SYSTEM_METHODS`).
pub(crate) const SLOW: Duration = Duration::from_millis(1500);

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
        (AuditEvent::MethodReturned, o.budgets.request, "method"),
        (AuditEvent::HookReturned, o.budgets.hook, "hook"),
    ] {
        for r in o.of(event) {
            let Some(ms) = r.get("duration_ms").as_u64() else {
                continue;
            };
            // A `config.update` may be a spawn's first, whose budget is its
            // own (`Timeouts::first_config`: kept at its spec value with
            // start-up where a run does so); the two are the same otherwise.
            let budget = match r.get("method").as_str() {
                Some(methods::CONFIG_UPDATE) => budget.max(o.budgets.first_config),
                _ => budget,
            };
            let took = Duration::from_millis(ms);
            if took >= budget {
                continue; // no answer in time: a timeout, another case's failure
            }
            judged += 1;
            let half = budget.mul_f64(MARGIN);
            let system = r
                .get("method")
                .as_str()
                .is_some_and(|m| SYSTEM_METHODS.contains(&m));
            if took > half || (took > SLOW && !system) {
                let name = r
                    .get(what)
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| what.to_string());
                let past = if took > half {
                    format!("more than half of its {budget:?}")
                } else {
                    format!("more than {SLOW:?}, which an agent waits through")
                };
                slow.push((r, format!("{name} took {ms} ms, {past}")));
            }
        }
    }
    let v = if slow.is_empty() {
        Verdict::pass(format!(
            "all {judged} method and hook answers came within half of their budget and within {SLOW:?}"
        ))
    } else {
        let shown: Vec<&str> = slow.iter().take(5).map(|(_, s)| s.as_str()).collect();
        Verdict::fail(format!(
            "expected: every answer within half of its budget and within {SLOW:?}; actual: {} did not: {}\n\
             fix: answer at once and do slow work off the reader (a thread or task), or reply with \
             what is known and send the rest as a notification",
            slow.len(),
            shown.join("; ")
        ))
    };
    (v, slow.into_iter().map(|(r, _)| r).collect())
}
