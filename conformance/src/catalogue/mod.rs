//! The case catalogue: every conformance case as a typed constant (its
//! stable id, level, spec section and the sentence it checks) and
//! [`CATALOGUE`], the table of them in run order. The table is the single
//! source for `kaged-conformance list` and `docs/conformance.md`.
//!
//! The runner names a case only through its constant
//! ([`METHODS_ANSWERS`], …), so a mistyped case is a compile error; the
//! string ids are stable public names (reports, `--only`, baselines).
//!
//! The constants are grouped by area and all re-exported here: the start
//! (`manifest.*`, `launch.*`, `cage.*`, `handshake.*`), the wire `protocol.*`, the
//! calls a host makes (`methods.*`, `hooks.*`, `compaction.*`, `config.*`)
//! and the plugin's behaviour over the run (`storage.*`,
//! `notifications.*`, `lifecycle.*`); the conformance profile's
//! (`profile.*`, `methods.examples`, `methods.invalid_params`) are in
//! `profile`.

mod behaviour;
mod calls;
mod case;
mod profile;
mod protocol;
mod startup;
pub use case::{CaseDef, Level};

pub use behaviour::*;
pub use calls::*;
pub use profile::*;
pub use protocol::*;
pub use startup::*;

/// Every case, in the order the suite reports them.
pub const CATALOGUE: &[CaseDef] = &[
    MANIFEST_VALID,
    MANIFEST_NO_WARNINGS,
    LAUNCH_COMMAND_EXISTS,
    LAUNCH_STARTS,
    LAUNCH_SELF_CONTAINED,
    MANIFEST_CURRENT,
    PROFILE_VALID,
    PROFILE_CURRENT,
    CAGE_STARTS_CAGED,
    HANDSHAKE_SILENT_BEFORE_INITIALIZE,
    HANDSHAKE_ANSWERS_IN_TIME,
    HANDSHAKE_WELL_FORMED,
    HANDSHAKE_NAME_MATCHES,
    HANDSHAKE_VERSION_MATCHES,
    HANDSHAKE_API_VERSION_MATCHES,
    HANDSHAKE_METHODS_WITHIN_MANIFEST,
    HANDSHAKE_METHODS_COMPLETE,
    HANDSHAKE_CAPABILITIES_WITHIN_MANIFEST,
    HANDSHAKE_INITIALIZE_VARIANTS,
    HANDSHAKE_NO_STDOUT_NOISE,
    PROTOCOL_PING,
    PROTOCOL_UNKNOWN_METHOD,
    PROTOCOL_NOT_INITIALIZED,
    PROTOCOL_BATCH_REJECTED,
    PROTOCOL_PARSE_ERROR,
    PROTOCOL_IDS_ECHOED,
    PROTOCOL_CONCURRENT_CALLS,
    PROTOCOL_PING_DURING_SLOW_CALL,
    PROTOCOL_NO_OVERSIZE_LINES,
    PROTOCOL_NO_JSONRPC_ON_STDERR,
    PROTOCOL_NO_ANSWER_TO_NOTIFICATIONS,
    PROTOCOL_NO_UNKNOWN_RESPONSE_IDS,
    PROTOCOL_NO_UNPROMPTED_BATCHES,
    PROTOCOL_REQUEST_IDS_MONOTONIC,
    METHODS_ANSWERS,
    METHODS_TOOL_VALID_ARGS,
    METHODS_TOOL_INVALID_ARGS,
    METHODS_EXAMPLES,
    METHODS_INVALID_PARAMS,
    HOOKS_ANSWERS,
    COMPACTION_COMPACTOR_CONTRACT,
    STORAGE_NO_DENIALS,
    NOTIFICATIONS_DECLARED_ONLY,
    NOTIFICATIONS_NO_FLOOD,
    TIMING_MARGINS,
    CONFIG_UPDATE_ACCEPTED,
    CONFIG_INVALID_REJECTED,
    CONFIG_UPDATE_IN_HANDSHAKE_WINDOW,
    SYSTEM_PROJECTS_ACTIVATED,
    SYSTEM_PROJECTS_DEACTIVATED,
    LIFECYCLE_SHUTDOWN_EXITS_ZERO,
    LIFECYCLE_STDIN_EOF_EXITS,
    LIFECYCLE_NO_ORPHANS,
];

/// The catalogue entry with this id (a parameterised id `x[name]` finds `x`).
pub fn find(id: &str) -> Option<&'static CaseDef> {
    let base = id.split('[').next().unwrap_or(id);
    CATALOGUE.iter().find(|c| c.id == base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_dotted_and_sectioned() {
        let mut ids: Vec<&str> = CATALOGUE.iter().map(|c| c.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), CATALOGUE.len());
        for c in CATALOGUE {
            let (group, name) = c.id.split_once('.').expect("dotted id");
            assert!(
                !group.is_empty() && !name.is_empty() && !name.contains('.'),
                "{}",
                c.id
            );
            assert!(!c.spec.is_empty() && !c.sentence.is_empty() && !c.title.is_empty());
        }
        assert_eq!(
            find("methods.answers[presets.list]").map(|c| c.id),
            Some("methods.answers")
        );
        assert_eq!(
            METHODS_ANSWERS.instance_id("presets.list"),
            "methods.answers[presets.list]"
        );
    }
}
