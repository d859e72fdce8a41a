//! The failure taxonomy: every case that does not pass carries a [`Kind`]
//! from one closed set, [`KINDS`] is the
//! table (name, the statuses it goes with, what it means), the single
//! source of `docs/conformance.md`'s list.
//!
//! The fail kinds start from the peer core's runtime failure codes
//! (`launch_failed`, `handshake_failed`, `timeout`, `crashed`,
//! `malformed_response`, `tool_not_exposed`, `protocol_version_mismatch`,
//! `capability_not_declared`) and add what a protocol suite needs
//! (`wrong_answer`, `cage_denied`, `stdout_noise`, ...); the skip kinds say
//! why a case did not run.

use serde::Serialize;

/// Why a case did not pass: one closed set for failures, warnings and
/// skips (see [`KINDS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The manifest (or the conformance profile) breaks a validation rule.
    ManifestInvalid,
    /// The checked-in manifest (or profile) is not what the code generates.
    ManifestDrift,
    /// The command does not exist, does not start, or its installed copy
    /// does not start.
    LaunchFailed,
    /// The cage refused what the plugin did (a path, the network, a call).
    CageDenied,
    /// No usable `initialize` answer.
    HandshakeFailed,
    /// The handshake's `api_version` is not the host's.
    ProtocolVersionMismatch,
    /// The handshake's name or version is not the manifest's.
    IdentityMismatch,
    /// Not JSON-RPC on stdout.
    StdoutNoise,
    /// The plugin uses a capability its manifest does not declare.
    CapabilityNotDeclared,
    /// A method, tool or notification the manifest does not declare.
    NotDeclared,
    /// A declared method or tool the plugin does not serve.
    ToolNotExposed,
    /// A rule of JSON-RPC or of the stdio protocol broken.
    ProtocolViolation,
    /// An answer that is not a JSON-RPC response of the right shape.
    MalformedResponse,
    /// A well-formed answer with the wrong content.
    WrongAnswer,
    /// No answer within the budget.
    Timeout,
    /// The plugin exited while the case waited on it.
    Crashed,
    /// Storage refused a call for a reason other than a capability.
    StorageDenied,
    /// Too many messages in too little time.
    Flood,
    /// Answers slower than the margins the spec allows.
    Slow,
    /// Memory that grows with use and is not given back.
    MemoryGrowth,
    /// The plugin did not exit as asked (shutdown, stdin EOF).
    DidNotExit,
    /// Processes outlived the plugin.
    Orphans,
    /// A baseline lists a case that now passes.
    StaleBaseline,
    /// The case does not apply to this plugin (nothing to check).
    NotApplicable,
    /// The case could not run because another case failed
    /// (`caused_by` names it).
    Blocked,
    /// `--only`/`--skip` left the case out.
    Deselected,
    /// `--max-failures N` was reached before the case ran.
    MaxFailures,
    /// Something the case needs is not available here.
    Unavailable,
    /// The suite could not make the case's input from what the plugin
    /// declares (a schema its generator cannot satisfy): the case is
    /// unverified, which no policy certifies.
    Untestable,
}

/// Which statuses a kind goes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KindFor {
    /// A failure or a warning.
    Failure,
    /// A skip.
    Skip,
}

/// One row of [`KINDS`].
#[derive(Debug, Clone, Copy)]
pub struct KindDef {
    /// The kind.
    pub kind: Kind,
    /// Its name in every report (`snake_case`).
    pub name: &'static str,
    /// The statuses it goes with.
    pub for_status: KindFor,
    /// What it means.
    pub meaning: &'static str,
}

macro_rules! kinds {
    ($($kind:ident $name:literal $for:ident $meaning:literal;)*) => {
        /// Every kind, with its name and meaning, in documentation order.
        pub const KINDS: &[KindDef] = &[$(
            KindDef { kind: Kind::$kind, name: $name, for_status: KindFor::$for, meaning: $meaning },
        )*];
    };
}

kinds! {
    ManifestInvalid "manifest_invalid" Failure "the manifest or the conformance profile breaks a validation rule";
    ManifestDrift "manifest_drift" Failure "the checked-in manifest or profile is not what the code generates";
    LaunchFailed "launch_failed" Failure "the command does not exist or does not start (also from its installed copy)";
    CageDenied "cage_denied" Failure "the cage refused what the plugin did: a path outside its grants, the network, a refused system call";
    HandshakeFailed "handshake_failed" Failure "no usable initialize answer";
    ProtocolVersionMismatch "protocol_version_mismatch" Failure "the handshake's api_version is not the host's";
    IdentityMismatch "identity_mismatch" Failure "the handshake's name or version is not the manifest's";
    StdoutNoise "stdout_noise" Failure "something other than JSON-RPC on stdout";
    CapabilityNotDeclared "capability_not_declared" Failure "the plugin uses a capability its manifest does not declare";
    NotDeclared "not_declared" Failure "a method, tool or notification the manifest does not declare";
    ToolNotExposed "tool_not_exposed" Failure "a declared method or tool the plugin does not serve";
    ProtocolViolation "protocol_violation" Failure "a rule of JSON-RPC 2.0 or of the stdio protocol broken";
    MalformedResponse "malformed_response" Failure "an answer that is not a JSON-RPC response of the right shape";
    WrongAnswer "wrong_answer" Failure "a well-formed answer with the wrong content (result or error code)";
    Timeout "timeout" Failure "no answer within the budget";
    Crashed "crashed" Failure "the plugin exited while the case waited on it";
    StorageDenied "storage_denied" Failure "storage refused a call for a reason other than a missing capability";
    Flood "flood" Failure "too many messages in too little time";
    Slow "slow" Failure "answers slower than the margins the spec allows";
    MemoryGrowth "memory_growth" Failure "memory that grows with use and is not given back";
    DidNotExit "did_not_exit" Failure "the plugin did not exit as asked (shutdown, end of stdin)";
    Orphans "orphans" Failure "processes outlived the plugin";
    StaleBaseline "stale_baseline" Failure "a baseline lists the case as failing but it passes";
    NotApplicable "not_applicable" Skip "the case does not apply to this plugin (nothing to check)";
    Blocked "blocked" Skip "another case's failure kept this one from running (caused_by names it)";
    Deselected "deselected" Skip "--only or --skip left the case out";
    MaxFailures "max_failures" Skip "--max-failures N failed cases were reached before this one ran";
    Unavailable "unavailable" Skip "something the case needs is not available on this machine";
    Untestable "untestable" Skip "the suite could not make the case's input from the manifest (a `pattern` without `examples`, say): unverified, so no policy certifies it";
}

impl Kind {
    /// The kind's row in [`KINDS`].
    pub fn def(self) -> &'static KindDef {
        // Every variant has a row (checked by the tests below).
        KINDS.iter().find(|d| d.kind == self).unwrap_or(&KINDS[0])
    }

    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        self.def().name
    }

    /// The rule a failure of this kind breaks whatever case it fails (the
    /// `rule:` a report quotes when the failure is not the case's own
    /// kind), quoted with where it is written; `None` when the case's own
    /// sentence is the rule.
    pub const fn rule(self) -> Option<&'static str> {
        match self {
            Kind::ProtocolViolation | Kind::StdoutNoise => Some(STDOUT_DISCIPLINE),
            _ => None,
        }
    }
}

/// plugin-host.md's stdout rule, which a line on stdout that is not an
/// answer breaks whatever case saw it.
const STDOUT_DISCIPLINE: &str = "plugin-host.md § Transport: Stdout discipline: Plugins must not write anything to stdout that is not a JSON-RPC message. Any non-JSON line on stdout is logged as a protocol error and triggers a warning audit event (plugin.stdout_noise). The SDK provides a log() helper that routes to stderr.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_one_row_whose_name_is_its_serde_name() {
        for d in KINDS {
            let json = serde_json::to_value(d.kind).expect("kind serializes");
            assert_eq!(json, d.name, "{d:?}");
            assert_eq!(KINDS.iter().filter(|e| e.kind == d.kind).count(), 1);
            assert_eq!(d.kind.def().name, d.name);
        }
        assert_eq!(KINDS.len(), Kind::Untestable as usize + 1);
    }
}
