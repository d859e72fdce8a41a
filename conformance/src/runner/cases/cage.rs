//! `cage.starts_caged`: the primary spawn ran in bwrap, under the policy
//! compiled from the manifest, started and answered `initialize` there.
//! What the answer says (a wrong version, a missing method) is for
//! `handshake.*`: any JSON-RPC answer to `initialize` passes here.
//!
//! It fails only where the cage is to blame: the cage does not compile
//! (an escaping grant...), or the plugin did not answer and its stderr
//! shows an error the cage explains (`runner::judge::diagnosis`: the detail names
//! the capability to declare). A plugin that does not answer for a reason
//! of its own is left to `launch.starts` and `handshake.*` (skipped here,
//! not blamed twice); uncaged runs skip.

use kaged_host_core::CageKind;

use crate::runner::judge::diagnosis::diagnose;
use crate::runner::judge::verdict::Verdict;
use crate::runner::session::context::RunContext;
use crate::runner::session::primary::Primary;

/// `cage.starts_caged`: caged, and the handshake passed.
pub(crate) fn starts_caged(ctx: &RunContext, p: &Primary) -> Verdict {
    let cage = &ctx.cage;
    let why = cage.reason.as_deref().unwrap_or("no reason given");
    match cage.kind {
        CageKind::Off => return Verdict::skip(format!("the plugin ran uncaged: {why}")),
        CageKind::Unavailable => {
            return Verdict::skip(format!(
                "plugins cannot be caged here, the plugin ran uncaged: {why} (--cage require \
                 refuses to run uncaged)"
            ))
        }
        CageKind::Bwrap => {}
    }
    if let Some(e) = &cage.compile_error {
        return Verdict::fail(format!(
            "expected: the plugin starts in its cage; actual: its cage does not compile, so \
             the host refuses to start it: {e}"
        ));
    }
    let summary = cage
        .summary()
        .map_or_else(|| "no policy".to_string(), |s| s.line());
    let answered = matches!(p.outcome, Some(Ok(_)))
        || p.answer
            .as_ref()
            .is_some_and(|a| a.get("result").is_some() || a.get("error").is_some());
    let what = match (&p.launch_error, &p.outcome) {
        (None, Some(_)) if answered && p.caged => {
            return Verdict::pass(format!(
                "the plugin started and answered initialize in the cage: {summary}"
            ))
        }
        (None, Some(_)) if answered => {
            return Verdict::fail(
                "expected: the plugin runs in bwrap; actual: the host ran it uncaged",
            )
        }
        (Some(e), _) => e.clone(),
        (None, _) if p.exited_at_once() => format!("it {}", p.exit_description()),
        (None, Some(Err(e))) => kaged_plugin_protocol::error_chain::chain(e),
        (None, Some(Ok(_))) => "a handshake without an answer".to_string(),
        (None, None) => "no handshake".to_string(),
    };
    let root = std::fs::canonicalize(&ctx.config_root).unwrap_or_else(|_| ctx.config_root.clone());
    let blame = cage
        .policy
        .as_ref()
        .and_then(|policy| diagnose(p.stderr.iter().map(String::as_str), policy, Some(&root)));
    match blame {
        Some(blame) => Verdict::fail(format!(
            "expected: the plugin starts and answers initialize in its cage ({summary}); \
             actual: {what}\n{}",
            blame.text
        )),
        None => Verdict::blocked_by(
            &crate::catalogue::LAUNCH_STARTS,
            format!(
                "the plugin does not answer initialize ({what}), and nothing it printed \
                 points at the cage (see launch.starts and handshake.*)"
            ),
        ),
    }
}
