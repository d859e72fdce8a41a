//! `handshake.*` (but the stdout observation, judged at the end of the
//! run): each case is judged on the primary spawn's raw `initialize`
//! answer, so that one broken field does not hide the others (the host
//! stops at the first); the host's own verdict is shown beside it.

use std::collections::BTreeSet;

use kaged_host_core::{canonical_capability, HandshakeError};
use kaged_plugin_protocol::{methods, HookName, API_VERSION};

use crate::runner::judge::verdict::Verdict;
use crate::runner::session::context::RunContext;
use crate::runner::session::primary::Primary;

/// The skip of every handshake case when the plugin could not start.
fn not_started(p: &Primary) -> Option<Verdict> {
    let e = p.launch_error.as_ref()?;
    Some(Verdict::blocked_by(
        &crate::catalogue::LAUNCH_STARTS,
        format!("the plugin could not be started: {e}"),
    ))
}

fn no_result() -> Verdict {
    Verdict::blocked(
        "no well-formed initialize result (see handshake.answers_in_time and handshake.well_formed)",
    )
}

/// ` (host: <error>)` when the host's handshake failed.
fn host_note(p: &Primary) -> String {
    p.error()
        .map(|e| format!(" (host: {e})"))
        .unwrap_or_default()
}

/// A field of the result against what the manifest (or the daemon) says.
fn compare(p: &Primary, what: &str, expected: String, got: Option<String>) -> Verdict {
    if let Some(v) = not_started(p) {
        return v;
    }
    match got {
        None => no_result(),
        Some(g) if g == expected => Verdict::pass(format!("{what} {g:?}")),
        Some(g) => Verdict::fail(format!(
            "expected: {what} {expected:?}; actual: {g:?}{}",
            host_note(p)
        )),
    }
}

/// The methods listed in the result, if there is one.
fn listed(p: &Primary) -> Option<Vec<String>> {
    p.result().map(|r| r.methods)
}

/// `handshake.silent_before_initialize`.
pub(crate) fn silent_before_initialize(_: &RunContext, p: &Primary) -> Verdict {
    if let Some(v) = not_started(p) {
        return v;
    }
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

/// `handshake.answers_in_time`.
pub(crate) fn answers_in_time(_: &RunContext, p: &Primary) -> Verdict {
    if let Some(v) = not_started(p) {
        return v;
    }
    match p.error() {
        Some(HandshakeError::Timeout(d)) => Verdict::fail_as(crate::catalogue::Kind::Timeout, format!("expected: an initialize answer within {d:?}; actual: none (plugin.initialize_timeout, plugin killed)")),
        Some(HandshakeError::Exited) => Verdict::blocked_by(&crate::catalogue::LAUNCH_STARTS, "the plugin exited before answering (see launch.starts)"),
        _ if p.answer.is_some() => Verdict::pass("initialize answered in time"),
        Some(e) => Verdict::blocked(format!("the plugin was killed before it answered: {e}")),
        None => Verdict::skip("no initialize answer was seen"),
    }
}

/// `handshake.well_formed`.
pub(crate) fn well_formed(_: &RunContext, p: &Primary) -> Verdict {
    if let Some(v) = not_started(p) {
        return v;
    }
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
            kaged_plugin_protocol::text::cut(&a.to_string(), 300)
        )),
        (Some(_), Some(_)) => Verdict::pass("the initialize result is well-formed"),
    }
}

/// `handshake.name_matches`.
pub(crate) fn name_matches(ctx: &RunContext, p: &Primary) -> Verdict {
    let got = p.result().map(|r| r.name);
    compare(p, "name", ctx.manifest.name.clone(), got)
}

/// `handshake.version_matches`.
pub(crate) fn version_matches(ctx: &RunContext, p: &Primary) -> Verdict {
    let got = p.result().map(|r| r.version);
    compare(p, "version", ctx.manifest.version.clone(), got)
}

/// `handshake.api_version_matches`.
pub(crate) fn api_version_matches(_: &RunContext, p: &Primary) -> Verdict {
    let got = p.result().map(|r| r.api_version.to_string());
    compare(p, "api_version", API_VERSION.to_string(), got)
}

/// How to bring the manifest back in line with the code.
const REGENERATE: &str = "the manifest and the code disagree: regenerate kaged-plugin.yaml \
    (an SDK plugin: `<binary> --print-manifest > kaged-plugin.yaml`, \
    `KAGED_UPDATE_MANIFEST=1 cargo test`, or `cargo kaged pack`; see manifest.current)";

/// `handshake.methods_within_manifest`.
pub(crate) fn methods_within_manifest(ctx: &RunContext, p: &Primary) -> Verdict {
    if let Some(v) = not_started(p) {
        return v;
    }
    let declared = ctx.manifest.declared_methods();
    let extra = match (&p.outcome, listed(p)) {
        (Some(Ok(info)), _) => Some(info.extra_methods.clone()),
        (_, Some(l)) => Some(
            l.into_iter()
                .filter(|x| {
                    !declared.contains(x)
                        && !methods::SYSTEM_METHODS.contains(&x.as_str())
                        && HookName::from_method(x).is_none()
                })
                .collect::<Vec<_>>(),
        ),
        _ => None,
    };
    match extra {
        None => no_result(),
        Some(x) if x.is_empty() => Verdict::pass("every listed method is declared"),
        Some(x) => Verdict::fail(format!("expected: only declared methods; actual: {x:?} listed but not declared (the host ignores them); {REGENERATE}, or list them under `methods:`")),
    }
}

/// `handshake.methods_complete`.
pub(crate) fn methods_complete(ctx: &RunContext, p: &Primary) -> Verdict {
    if let Some(v) = not_started(p) {
        return v;
    }
    let declared = ctx.manifest.declared_methods();
    let missing = match (&p.outcome, listed(p)) {
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
    match missing {
        None => no_result(),
        Some(x) if x.is_empty() => Verdict::pass(format!("all {} declared methods and tools listed", declared.len())),
        Some(x) => Verdict::fail(format!("expected: every declared method and tool listed; actual: {x:?} missing (the host marks them unavailable); {REGENERATE}, or implement them")),
    }
}

/// `handshake.capabilities_within_manifest`.
pub(crate) fn capabilities_within_manifest(ctx: &RunContext, p: &Primary) -> Verdict {
    if let Some(v) = not_started(p) {
        return v;
    }
    let Some(r) = p.result() else {
        return no_result();
    };
    let m = &ctx.manifest;
    let allowed: BTreeSet<String> = m
        .capability_strings()
        .iter()
        .map(|c| canonical_capability(c))
        .collect();
    let excess: Vec<&String> = r
        .capabilities_used
        .iter()
        .filter(|c| !allowed.contains(&canonical_capability(c)))
        .collect();
    if excess.is_empty() {
        Verdict::pass(format!(
            "capabilities_used {:?} within the manifest",
            r.capabilities_used
        ))
    } else {
        Verdict::fail(format!(
            "expected: capabilities_used within {:?}; actual: {excess:?} not in the manifest{}",
            m.capability_strings(),
            host_note(p)
        ))
    }
}
