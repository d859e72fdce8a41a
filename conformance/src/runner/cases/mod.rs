//! The runner's table: every catalogue case paired with the function that
//! checks it, in run order. The area files hold the functions; this table
//! is the only place that pairs them with their cases.
//!
//! Report order differs from catalogue order in two places: the whole-run
//! observations (`handshake.no_stdout_noise`, `protocol.no_oversize_lines`,
//! …) come last, and `lifecycle.shutdown_exits_zero` after the other
//! lifecycle cases (it is run first, though: `runner::lanes::BARRIER`).
//! Consecutive per-target rows run target by target (a tool's three
//! `methods.*` cases together).

mod busy;
mod cage;
mod config;
mod drift;
mod examples;
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
use crate::runner::check::{CaseFn, Check, Per, Target};
use crate::runner::context::RunContext;
use crate::runner::scope::Scope;
use crate::runner::sessions::Sessions;
use crate::runner::verdict::Verdict;

/// A table row: the case, what it runs for, the function's kind and path.
macro_rules! check {
    ($case:expr, $per:ident, $kind:ident($f:path)) => {
        Check {
            case: &$case,
            per: Per::$per,
            run: check!(@fn $kind $f),
            #[cfg(test)]
            name: stringify!($f),
        }
    };
    (@fn Session $f:path) => {{
        fn boxed<'r>(
            ctx: &'r RunContext,
            sessions: &'r mut Sessions,
            scope: &'r mut Scope,
            target: &'r Target,
        ) -> LocalBoxFuture<'r, Verdict> {
            Box::pin($f(ctx, sessions, scope, target))
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
    check!(MANIFEST_VALID, Plugin, Manifest(manifest::valid)),
    check!(MANIFEST_NO_WARNINGS, Plugin, Manifest(manifest::no_warnings)),
    check!(LAUNCH_COMMAND_EXISTS, Plugin, Context(launch::command_exists)),
    check!(LAUNCH_STARTS, Plugin, Launch(launch::starts)),
    check!(CAGE_STARTS_CAGED, Plugin, Launch(cage::starts_caged)),
    check!(LAUNCH_SELF_CONTAINED, Plugin, Session(launch::self_contained)),
    check!(MANIFEST_CURRENT, Plugin, Session(drift::current)),
    check!(PROFILE_VALID, Plugin, Session(profile::valid)),
    check!(PROFILE_CURRENT, Plugin, Session(profile::current)),
    check!(HANDSHAKE_SILENT_BEFORE_INITIALIZE, Plugin, Handshake(handshake::silent_before_initialize)),
    check!(HANDSHAKE_ANSWERS_IN_TIME, Plugin, Handshake(handshake::answers_in_time)),
    check!(HANDSHAKE_WELL_FORMED, Plugin, Handshake(handshake::well_formed)),
    check!(HANDSHAKE_NAME_MATCHES, Plugin, Handshake(handshake::name_matches)),
    check!(HANDSHAKE_VERSION_MATCHES, Plugin, Handshake(handshake::version_matches)),
    check!(HANDSHAKE_API_VERSION_MATCHES, Plugin, Handshake(handshake::api_version_matches)),
    check!(HANDSHAKE_METHODS_WITHIN_MANIFEST, Plugin, Handshake(handshake::methods_within_manifest)),
    check!(HANDSHAKE_METHODS_COMPLETE, Plugin, Handshake(handshake::methods_complete)),
    check!(HANDSHAKE_CAPABILITIES_WITHIN_MANIFEST, Plugin, Handshake(handshake::capabilities_within_manifest)),
    check!(HANDSHAKE_INITIALIZE_VARIANTS, Plugin, Session(variants::initialize_variants)),
    check!(PROTOCOL_PING, Plugin, Session(protocol::ping)),
    check!(PROTOCOL_UNKNOWN_METHOD, Plugin, Session(protocol::unknown_method)),
    check!(PROTOCOL_NOT_INITIALIZED, Plugin, Session(protocol::not_initialized)),
    check!(PROTOCOL_BATCH_REJECTED, Plugin, Session(protocol::batch_rejected)),
    check!(PROTOCOL_PARSE_ERROR, Plugin, Session(protocol::parse_error)),
    check!(PROTOCOL_IDS_ECHOED, Plugin, Session(protocol::ids_echoed)),
    check!(PROTOCOL_CONCURRENT_CALLS, Plugin, Session(protocol::concurrent_calls)),
    check!(PROTOCOL_PING_DURING_SLOW_CALL, Plugin, Session(busy::ping_during_slow_call)),
    check!(METHODS_ANSWERS, MethodOrTool, Session(methods::answers)),
    check!(METHODS_TOOL_VALID_ARGS, Tool, Session(methods::tool_valid_args)),
    check!(METHODS_TOOL_INVALID_ARGS, Tool, Session(methods::tool_invalid_args)),
    check!(METHODS_EXAMPLES, Method, Session(examples::examples)),
    check!(METHODS_INVALID_PARAMS, Method, Session(examples::invalid_params)),
    check!(HOOKS_ANSWERS, Hook, Session(hooks::answers)),
    check!(COMPACTION_COMPACTOR_CONTRACT, Plugin, Session(hooks::compactor_contract)),
    check!(CONFIG_UPDATE_ACCEPTED, Plugin, Session(methods::config_update_accepted)),
    check!(CONFIG_INVALID_REJECTED, Plugin, Session(config::invalid_rejected)),
    check!(CONFIG_UPDATE_IN_HANDSHAKE_WINDOW, Plugin, Session(config::update_in_handshake_window)),
    check!(SYSTEM_PROJECTS_ACTIVATED, Plugin, Session(projects::activated)),
    check!(SYSTEM_PROJECTS_DEACTIVATED, Plugin, Session(projects::deactivated)),
    check!(LIFECYCLE_STDIN_EOF_EXITS, Plugin, Session(lifecycle::stdin_eof_exits)),
    check!(LIFECYCLE_NO_ORPHANS, Plugin, Session(lifecycle::no_orphans)),
    check!(LIFECYCLE_SHUTDOWN_EXITS_ZERO, Plugin, Session(lifecycle::shutdown_exits_zero)),
    check!(HANDSHAKE_NO_STDOUT_NOISE, Plugin, Observed(observe::no_stdout_noise)),
    check!(PROTOCOL_NO_OVERSIZE_LINES, Plugin, Observed(observe::no_oversize_lines)),
    check!(PROTOCOL_NO_JSONRPC_ON_STDERR, Plugin, Observed(observe::no_jsonrpc_on_stderr)),
    check!(PROTOCOL_NO_ANSWER_TO_NOTIFICATIONS, Plugin, Observed(violations::no_answer_to_notifications)),
    check!(PROTOCOL_NO_UNKNOWN_RESPONSE_IDS, Plugin, Observed(violations::no_unknown_response_ids)),
    check!(PROTOCOL_NO_UNPROMPTED_BATCHES, Plugin, Observed(violations::no_unprompted_batches)),
    check!(PROTOCOL_REQUEST_IDS_MONOTONIC, Plugin, Observed(violations::request_ids_monotonic)),
    check!(STORAGE_NO_DENIALS, Plugin, Observed(observe::no_denials)),
    check!(NOTIFICATIONS_DECLARED_ONLY, Plugin, Observed(observe::declared_only)),
    check!(NOTIFICATIONS_NO_FLOOD, Plugin, Observed(observe::no_flood)),
    check!(TIMING_MARGINS, Plugin, Observed(timing::margins)),
];

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::CHECKS;
    use crate::catalogue::CATALOGUE;
    use crate::runner::check::Per;

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
    fn rows_are_in_stage_order_and_per_as_the_catalogue_says() {
        for w in CHECKS.windows(2) {
            assert!(
                w[0].run.stage() <= w[1].run.stage(),
                "{} runs at a later stage than {}",
                w[0].case.id,
                w[1].case.id
            );
        }
        for c in CHECKS {
            let per = match c.per {
                Per::Plugin => None,
                Per::MethodOrTool | Per::Method => Some("method"),
                Per::Tool => Some("tool"),
                Per::Hook => Some("hook"),
            };
            assert_eq!(per, c.case.per, "{}", c.case.id);
        }
    }
}
