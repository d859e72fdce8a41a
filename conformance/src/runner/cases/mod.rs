//! The runner's table: every catalogue case paired with the function that
//! checks it, in run order. The area files hold the functions; this table
//! is the only place that pairs them with their cases.
//!
//! Report order differs from catalogue order in two places: the whole-run
//! observations (`handshake.no_stdout_noise`, `protocol.no_oversize_lines`,
//! …) come last, and `lifecycle.shutdown_exits_zero` after the other
//! lifecycle cases (it is run first, though: its lane is `Lane::Barrier`).
//! Consecutive per-target rows run target by target (a tool's three
//! `methods.*` cases together).

mod busy;
mod cage;
mod config;
mod drift;
mod examples;
mod golden;
mod handshake;
mod hooks;
mod installed_copy;
mod launch;
mod lifecycle;
mod manifest;
mod methods;
mod observe;
mod profile;
mod projects;
mod protocol;
mod timing;
mod variants;
mod violations;

pub(crate) use manifest::usable;

use futures_util::future::LocalBoxFuture;

use crate::catalogue::*;
use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::{CaseFn, Check, Target};
use crate::runner::session::context::RunContext;
use crate::runner::session::processes::LaneProcesses;

/// A table row: the case, the function's kind and path.
macro_rules! check {
    ($case:expr, $kind:ident($f:path)) => {
        Check {
            case: &$case,
            run: check!(@fn $kind $f),
            #[cfg(test)]
            name: stringify!($f),
        }
    };
    (@fn Session $f:path) => {{
        fn boxed<'r>(
            ctx: &'r RunContext,
            processes: &'r mut LaneProcesses,
            scope: &'r mut Scope,
            target: &'r Target,
        ) -> LocalBoxFuture<'r, Verdict> {
            Box::pin($f(ctx, processes, scope, target))
        }
        CaseFn::Session(boxed)
    }};
    (@fn $kind:ident $f:path) => {
        CaseFn::$kind($f)
    };
}

/// Every case with its function, in run order.
#[rustfmt::skip]
pub(crate) const CHECKS: &[Check] = &[
    check!(MANIFEST_VALID, Manifest(manifest::valid)),
    check!(MANIFEST_NO_WARNINGS, Manifest(manifest::no_warnings)),
    check!(MANIFEST_TOOL_COUNT, Manifest(manifest::tool_count)),
    check!(LAUNCH_COMMAND_EXISTS, Context(launch::command_exists)),
    check!(LAUNCH_STARTS, Launch(launch::starts)),
    check!(CAGE_STARTS_CAGED, Launch(cage::starts_caged)),
    check!(LAUNCH_SELF_CONTAINED, Session(launch::self_contained)),
    check!(MANIFEST_CURRENT, Session(drift::current)),
    check!(PROFILE_VALID, Session(profile::valid)),
    check!(PROFILE_CURRENT, Session(profile::current)),
    check!(GOLDEN_TRANSCRIPTS, Session(golden::transcripts)),
    check!(HANDSHAKE_SILENT_BEFORE_INITIALIZE, Handshake(handshake::silent_before_initialize)),
    check!(HANDSHAKE_ANSWERS_IN_TIME, Handshake(handshake::answers_in_time)),
    check!(HANDSHAKE_WELL_FORMED, Handshake(handshake::well_formed)),
    check!(HANDSHAKE_NAME_MATCHES, Handshake(handshake::name_matches)),
    check!(HANDSHAKE_VERSION_MATCHES, Handshake(handshake::version_matches)),
    check!(HANDSHAKE_API_VERSION_MATCHES, Handshake(handshake::api_version_matches)),
    check!(HANDSHAKE_METHODS_WITHIN_MANIFEST, Handshake(handshake::methods_within_manifest)),
    check!(HANDSHAKE_METHODS_COMPLETE, Handshake(handshake::methods_complete)),
    check!(HANDSHAKE_CAPABILITIES_WITHIN_MANIFEST, Handshake(handshake::capabilities_within_manifest)),
    check!(HANDSHAKE_INITIALIZE_VARIANTS, Session(variants::initialize_variants)),
    check!(PROTOCOL_PING, Session(protocol::ping)),
    check!(PROTOCOL_UNKNOWN_METHOD, Session(protocol::unknown_method)),
    check!(PROTOCOL_NOT_INITIALIZED, Session(protocol::not_initialized)),
    check!(PROTOCOL_BATCH_REJECTED, Session(protocol::batch_rejected)),
    check!(PROTOCOL_PARSE_ERROR, Session(protocol::parse_error)),
    check!(PROTOCOL_IDS_ECHOED, Session(protocol::ids_echoed)),
    check!(PROTOCOL_CONCURRENT_CALLS, Session(protocol::concurrent_calls)),
    check!(PROTOCOL_PING_DURING_SLOW_CALL, Session(busy::ping_during_slow_call)),
    check!(METHODS_ANSWERS, Session(methods::answers)),
    check!(METHODS_TOOL_VALID_ARGS, Session(methods::tool_valid_args)),
    check!(METHODS_TOOL_INVALID_ARGS, Session(methods::tool_invalid_args)),
    check!(METHODS_EXAMPLES, Session(examples::examples)),
    check!(METHODS_INVALID_PARAMS, Session(examples::invalid_params)),
    check!(HOOKS_ANSWERS, Session(hooks::answers)),
    check!(COMPACTION_COMPACTOR_CONTRACT, Session(hooks::compactor_contract)),
    check!(CONFIG_UPDATE_ACCEPTED, Session(methods::config_update_accepted)),
    check!(CONFIG_INVALID_REJECTED, Session(config::invalid_rejected)),
    check!(CONFIG_UPDATE_IN_HANDSHAKE_WINDOW, Session(config::update_in_handshake_window)),
    check!(SYSTEM_PROJECTS_ACTIVATED, Session(projects::activated)),
    check!(SYSTEM_PROJECTS_DEACTIVATED, Session(projects::deactivated)),
    check!(LIFECYCLE_STDIN_EOF_EXITS, Session(lifecycle::stdin_eof_exits)),
    check!(LIFECYCLE_NO_ORPHANS, Session(lifecycle::no_orphans)),
    check!(LIFECYCLE_SHUTDOWN_EXITS_ZERO, Session(lifecycle::shutdown_exits_zero)),
    check!(HANDSHAKE_NO_STDOUT_NOISE, Observed(observe::no_stdout_noise)),
    check!(PROTOCOL_NO_OVERSIZE_LINES, Observed(observe::no_oversize_lines)),
    check!(PROTOCOL_NO_JSONRPC_ON_STDERR, Observed(observe::no_jsonrpc_on_stderr)),
    check!(PROTOCOL_NO_ANSWER_TO_NOTIFICATIONS, Observed(violations::no_answer_to_notifications)),
    check!(PROTOCOL_NO_UNKNOWN_RESPONSE_IDS, Observed(violations::no_unknown_response_ids)),
    check!(PROTOCOL_NO_UNPROMPTED_BATCHES, Observed(violations::no_unprompted_batches)),
    check!(PROTOCOL_REQUEST_IDS_MONOTONIC, Observed(violations::request_ids_monotonic)),
    check!(STORAGE_NO_DENIALS, Observed(observe::no_denials)),
    check!(NOTIFICATIONS_DECLARED_ONLY, Observed(observe::declared_only)),
    check!(NOTIFICATIONS_NO_FLOOD, Observed(observe::no_flood)),
    check!(TIMING_MARGINS, Observed(timing::margins)),
];

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::CHECKS;
    use crate::catalogue::CATALOGUE;

    #[test]
    fn every_case_has_exactly_one_function() {
        let mut rows: BTreeMap<&str, usize> = BTreeMap::new();
        for c in CHECKS {
            *rows.entry(c.case.id).or_default() += 1;
        }
        let missing: Vec<&str> = CATALOGUE
            .iter()
            .map(|c| c.id)
            .filter(|id| !rows.contains_key(id))
            .collect();
        assert!(missing.is_empty(), "cases without a function: {missing:?}");
        let twice: Vec<&&str> = rows
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(id, _)| id)
            .collect();
        assert!(twice.is_empty(), "cases registered twice: {twice:?}");
        for c in CHECKS {
            assert!(
                CATALOGUE.contains(c.case),
                "{} is not in the catalogue",
                c.case.id
            );
        }
    }

    #[test]
    fn no_function_is_registered_twice() {
        let mut names: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        let twice: Vec<&[&str]> = names.windows(2).filter(|w| w[0] == w[1]).collect();
        assert!(twice.is_empty(), "functions registered twice: {twice:?}");
    }

    #[test]
    fn rows_are_in_stage_order() {
        for w in CHECKS.windows(2) {
            assert!(
                w[0].run.stage() <= w[1].run.stage(),
                "{} runs at a later stage than {}",
                w[0].case.id,
                w[1].case.id
            );
        }
    }
}
