//! Each case's own failure [`Kind`]: what its failure is when the wire
//! shows nothing more specific (a timeout, an exit, the cage, a missing
//! capability: `runner::roots` refines it). One row per catalogue case;
//! the test below holds the table to the catalogue.

use crate::catalogue::*;
use crate::report::Kind;

/// Every catalogue case with its own kind.
const CASE_KINDS: &[(&CaseDef, Kind)] = &[
    (&MANIFEST_VALID, Kind::ManifestInvalid),
    (&MANIFEST_NO_WARNINGS, Kind::ManifestInvalid),
    (&MANIFEST_CURRENT, Kind::ManifestDrift),
    (&PROFILE_VALID, Kind::ManifestInvalid),
    (&PROFILE_CURRENT, Kind::ManifestDrift),
    (&LAUNCH_COMMAND_EXISTS, Kind::LaunchFailed),
    (&LAUNCH_STARTS, Kind::LaunchFailed),
    (&LAUNCH_SELF_CONTAINED, Kind::LaunchFailed),
    (&CAGE_STARTS_CAGED, Kind::CageDenied),
    (&HANDSHAKE_SILENT_BEFORE_INITIALIZE, Kind::StdoutNoise),
    (&HANDSHAKE_ANSWERS_IN_TIME, Kind::HandshakeFailed),
    (&HANDSHAKE_WELL_FORMED, Kind::HandshakeFailed),
    (&HANDSHAKE_NAME_MATCHES, Kind::IdentityMismatch),
    (&HANDSHAKE_VERSION_MATCHES, Kind::IdentityMismatch),
    (
        &HANDSHAKE_API_VERSION_MATCHES,
        Kind::ProtocolVersionMismatch,
    ),
    (&HANDSHAKE_METHODS_WITHIN_MANIFEST, Kind::NotDeclared),
    (&HANDSHAKE_METHODS_COMPLETE, Kind::ToolNotExposed),
    (
        &HANDSHAKE_CAPABILITIES_WITHIN_MANIFEST,
        Kind::CapabilityNotDeclared,
    ),
    (&HANDSHAKE_INITIALIZE_VARIANTS, Kind::HandshakeFailed),
    (&HANDSHAKE_NO_STDOUT_NOISE, Kind::StdoutNoise),
    (&PROTOCOL_PING, Kind::WrongAnswer),
    (&PROTOCOL_UNKNOWN_METHOD, Kind::WrongAnswer),
    (&PROTOCOL_NOT_INITIALIZED, Kind::ProtocolViolation),
    (&PROTOCOL_BATCH_REJECTED, Kind::ProtocolViolation),
    (&PROTOCOL_PARSE_ERROR, Kind::ProtocolViolation),
    (&PROTOCOL_IDS_ECHOED, Kind::ProtocolViolation),
    (&PROTOCOL_CONCURRENT_CALLS, Kind::Timeout),
    (&PROTOCOL_PING_DURING_SLOW_CALL, Kind::Timeout),
    (&PROTOCOL_NO_OVERSIZE_LINES, Kind::ProtocolViolation),
    (&PROTOCOL_NO_JSONRPC_ON_STDERR, Kind::ProtocolViolation),
    (
        &PROTOCOL_NO_ANSWER_TO_NOTIFICATIONS,
        Kind::ProtocolViolation,
    ),
    (&PROTOCOL_NO_UNKNOWN_RESPONSE_IDS, Kind::ProtocolViolation),
    (&PROTOCOL_NO_UNPROMPTED_BATCHES, Kind::ProtocolViolation),
    (&PROTOCOL_REQUEST_IDS_MONOTONIC, Kind::ProtocolViolation),
    (&METHODS_ANSWERS, Kind::WrongAnswer),
    (&METHODS_TOOL_VALID_ARGS, Kind::WrongAnswer),
    (&METHODS_TOOL_INVALID_ARGS, Kind::WrongAnswer),
    (&METHODS_EXAMPLES, Kind::WrongAnswer),
    (&METHODS_INVALID_PARAMS, Kind::WrongAnswer),
    (&HOOKS_ANSWERS, Kind::WrongAnswer),
    (&COMPACTION_COMPACTOR_CONTRACT, Kind::WrongAnswer),
    (&STORAGE_NO_DENIALS, Kind::StorageDenied),
    (&NOTIFICATIONS_DECLARED_ONLY, Kind::NotDeclared),
    (&NOTIFICATIONS_NO_FLOOD, Kind::Flood),
    (&TIMING_MARGINS, Kind::Slow),
    (&CONFIG_UPDATE_ACCEPTED, Kind::WrongAnswer),
    (&CONFIG_INVALID_REJECTED, Kind::WrongAnswer),
    (&CONFIG_UPDATE_IN_HANDSHAKE_WINDOW, Kind::WrongAnswer),
    (&SYSTEM_PROJECTS_ACTIVATED, Kind::WrongAnswer),
    (&SYSTEM_PROJECTS_DEACTIVATED, Kind::WrongAnswer),
    (&LIFECYCLE_SHUTDOWN_EXITS_ZERO, Kind::DidNotExit),
    (&LIFECYCLE_STDIN_EOF_EXITS, Kind::DidNotExit),
    (&LIFECYCLE_NO_ORPHANS, Kind::Orphans),
];

/// The kind of a failure of `case` when nothing more specific is known.
pub(crate) fn case_kind(case: &CaseDef) -> Kind {
    CASE_KINDS
        .iter()
        .find(|(c, _)| c.id == case.id)
        .map_or(Kind::WrongAnswer, |(_, k)| *k)
}

/// The rule a failure of `kind` breaks when it is not the case's own:
/// the `rule:` a report quotes (with where it is written), so that a
/// wrong-shape hook answer does not quote the hook-timeout rule, nor a
/// JSON line on stdout a method's. `None`: the case's own sentence.
/// A row naming cases applies to them whatever their own kind (its rule
/// is more precise than the case's sentence); a row for every case only
/// when the failure is not of the case's own kind.
pub(crate) fn rule_broken(case: &CaseDef, kind: Kind) -> Option<&'static str> {
    let own = kind == case_kind(case);
    KIND_RULES
        .iter()
        .find(|(k, prefix, _)| {
            *k == kind
                && match prefix {
                    Some(p) => case.id.starts_with(p),
                    None => !own,
                }
        })
        .map(|(_, _, rule)| *rule)
}

/// Failure kinds whose rule is not the case's own, with the cases they
/// apply to (`None`: every case) and the rule, quoted with its source.
const KIND_RULES: &[(Kind, Option<&str>, &str)] = &[
    (
        Kind::WrongAnswer,
        Some("hooks.answers"),
        "ADDENDUM §5: Observer answers: `null`, `{}` or `{retain?: string[], inject?: string}`.",
    ),
    (
        Kind::ProtocolViolation,
        None,
        "plugin-host.md § Transport: Stdout discipline: Plugins must not write anything to stdout that is not a JSON-RPC message. Any non-JSON line on stdout is logged as a protocol error and triggers a warning audit event (plugin.stdout_noise). The SDK provides a log() helper that routes to stderr.",
    ),
    (
        Kind::StdoutNoise,
        None,
        "plugin-host.md § Transport: Stdout discipline: Plugins must not write anything to stdout that is not a JSON-RPC message. Any non-JSON line on stdout is logged as a protocol error and triggers a warning audit event (plugin.stdout_noise). The SDK provides a log() helper that routes to stderr.",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::KindFor;

    #[test]
    fn every_catalogue_case_has_one_failure_kind() {
        for case in CATALOGUE {
            let rows: Vec<_> = CASE_KINDS.iter().filter(|(c, _)| c.id == case.id).collect();
            assert_eq!(
                rows.len(),
                1,
                "{} needs exactly one row in CASE_KINDS",
                case.id
            );
            assert_eq!(rows[0].1.def().for_status, KindFor::Failure, "{}", case.id);
        }
        assert_eq!(CASE_KINDS.len(), CATALOGUE.len());
    }
}
