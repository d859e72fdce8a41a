//! `cage.starts_caged`: the primary spawn ran in bwrap, under the policy
//! compiled from the manifest, and completed the handshake there.
//!
//! It fails only where the cage is to blame: the cage does not compile
//! (an escaping grant...), or the plugin did not get through the handshake
//! and its stderr shows an error the cage explains (`runner::diagnosis`:
//! the detail names the capability to declare). A plugin that fails the
//! handshake for a reason of its own is left to `launch.starts` and
//! `handshake.*` (skipped here, not blamed twice); uncaged runs skip.

use kaged_host_sim::CageKind;

use crate::runner::context::RunContext;
use crate::runner::diagnosis::diagnose;
use crate::runner::primary::Primary;
use crate::runner::verdict::Verdict;

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
    let what = match (&p.launch_error, &p.outcome) {
        (None, Some(Ok(_))) if p.caged => {
            return Verdict::pass(format!("the handshake completed in the cage: {summary}"))
        }
        (None, Some(Ok(_))) => {
            return Verdict::fail(
                "expected: the plugin runs in bwrap; actual: the host ran it uncaged",
            )
        }
        (Some(e), _) => e.clone(),
        (None, _) if p.exited_at_once() => format!("it {}", p.exit_description()),
        (None, Some(Err(e))) => kaged_plugin_protocol::error_chain::chain(e),
        (None, None) => "no handshake".to_string(),
    };
    let blame = cage
        .policy
        .as_ref()
        .and_then(|policy| diagnose(p.stderr.iter().map(String::as_str), policy));
    match blame {
        Some(blame) => Verdict::fail(format!(
            "expected: the plugin completes the handshake in its cage ({summary}); actual: \
             {what}\n{blame}"
        )),
        None => Verdict::skip(format!(
            "the plugin does not complete the handshake ({what}), and nothing it printed \
             points at the cage (see launch.starts and handshake.*)"
        )),
    }
}
