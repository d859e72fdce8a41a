//! Every case of the catalogue has a broken fixture that proves its fail
//! (MUST) or warn (SHOULD) verdict, bowtie style. `FAIL_PROOFS` is the
//! table: each row a fixture and exactly the cases it breaks (most break
//! one rule), run by the test of its name, which may check more of the
//! report; [`every_case_has_a_fail_proof`] checks that the table names
//! every catalogue case with the verdict of its level.

mod support;

use std::collections::BTreeSet;

use kaged_conformance::catalogue::Kind;
use kaged_conformance::catalogue::*;
use kaged_conformance::report::Status::{Fail, Pass, Skip, Warn};
use kaged_conformance::report::{
    render_human, render_junit, render_markdown, render_tap, EndedBy, Report,
};
use kaged_conformance::selection::{Pattern, Selection};
use kaged_conformance::{run_suite, Options};
use support::own_fixture;
use support::proofs::{fail, host, manifest, own, warn, Budgets, Proof};

/// The table, and one test per row: `name: fixture => [broken cases]`,
/// optionally `then |report| { further checks }`.
macro_rules! fail_proofs {
    ($(
        $(#[$doc:meta])*
        $test:ident: $fixture:expr => [$($row:expr),* $(,)?] $(then $check:expr)?;
    )*) => {
        /// Every fixture with exactly the cases it breaks.
        const FAIL_PROOFS: &[Proof] = &[$(
            Proof { test: stringify!($test), fixture: $fixture, broken: &[$($row),*] },
        )*];

        $(
            $(#[$doc])*
            #[test]
            fn $test() {
                if !proof(stringify!($test)).runnable() {
                    return;
                }
                let _report = proof(stringify!($test)).prove();
                $(
                    let check: fn(&Report) = $check;
                    check(&_report);
                )?
            }
        )*
    };
}

/// The row run by `test`.
fn proof(test: &str) -> &'static Proof {
    FAIL_PROOFS
        .iter()
        .find(|p| p.test == test)
        .unwrap_or_else(|| panic!("no fail proof {test}"))
}

fail_proofs! {
    // The suite's own fixtures (`tests/fixtures/plugins/`, on
    // `_lib/cproto.py`).

    bad_ping: own("bad-ping") => [fail(PROTOCOL_PING)] then |r| {
        let d = &r.case(PROTOCOL_PING.id).detail;
        assert!(d.contains("healthy"), "{d}");
    };

    unknown_method_ok: own("unknown-method-ok") => [fail(PROTOCOL_UNKNOWN_METHOD)] then |r| {
        assert!(r.case(PROTOCOL_UNKNOWN_METHOD.id).detail.contains("actual: result null"));
    };

    /// At time scale 0.2 (ping budget 1 s): the plugin answers a ping
    /// behind one 0.1 s call however busy the machine is, and drops what
    /// does not fit its queue.
    drops_when_busy: own("drops-when-busy").scale(0.2).jobs_compared() => [fail(PROTOCOL_CONCURRENT_CALLS)] then |r| {
        assert!(r.case(PROTOCOL_CONCURRENT_CALLS.id).detail.contains("unanswered within"));
    };

    schema_lies: own("schema-lies") => [
        fail(METHODS_TOOL_VALID_ARGS).on("schema-lies.search").audit("plugin.method_returned"),
    ] then |r| {
        let d = &r.case(&METHODS_TOOL_VALID_ARGS.instance_id("schema-lies.search")).detail;
        assert!(
            d.contains("the schema is incomplete") && d.contains("as agent `primary`"),
            "{d}"
        );
        // The same tool still answers, and rejects arguments that break its schema.
        assert_eq!(r.case(&METHODS_ANSWERS.instance_id("schema-lies.search")).status, Pass);
        assert_eq!(
            r.case(&METHODS_TOOL_INVALID_ARGS.instance_id("schema-lies.search")).status,
            Pass
        );
    };

    hook_errors_get_one_verdict_per_hook: own("hook-errors") => [
        fail(HOOKS_ANSWERS).on("on_session_start").audit("plugin.hook.failed"),
        fail(HOOKS_ANSWERS).on("post_compact").audit("plugin.hook.returned"),
    ] then |r| {
        assert_eq!(r.case(&HOOKS_ANSWERS.instance_id("on_session_idle")).status, Pass);
        assert!(r
            .case(&HOOKS_ANSWERS.instance_id("post_compact"))
            .detail
            .contains("{\"retain\":\"msg_002\"}"));
    };

    /// The program generates a manifest (`--print-manifest`) with a method
    /// the checked-in one lacks: `manifest.current` names the field and the fix.
    manifest_drift: own("manifest-drift") => [warn(MANIFEST_CURRENT)] then |r| {
        let detail = &r.case(MANIFEST_CURRENT.id).detail;
        assert!(detail.contains("status.history") && detail.contains("regenerate"), "{detail}");
    };

    /// The conformance profile names a method the manifest lacks and gives
    /// an example its own schema refuses: `profile.valid` names both and
    /// where they are; the methods are then called with `{}` only.
    profile_invalid: own("profile-invalid") => [fail(PROFILE_VALID)] then |r| {
        let d = &r.case(PROFILE_VALID.id).detail;
        assert!(d.starts_with("expected: kaged-conformance.yaml valid for kaged-plugin.yaml; actual: 2 problem(s): "), "{d}");
        assert!(d.contains(r#"line 9, column 17: methods.status.get.examples[0].params: does not satisfy params_schema: "yes" is not of type "boolean" (at /verbose)"#), "{d}");
        assert!(d.contains("methods.status.history: not a method of kaged-plugin.yaml (its methods: status.get)"), "{d}");
        let ex = r.case(&METHODS_EXAMPLES.instance_id("status.get"));
        assert_eq!(ex.status, Skip);
        assert!(ex.detail.starts_with("the profile is invalid (see profile.valid)"), "{}", ex.detail);
    };

    /// Its methods break their profile: `calc.add` answers a result other
    /// than the declared one, `calc.div` accepts params the profile says it
    /// refuses; their other profile cases pass.
    profile_wrong: own("profile-wrong").jobs_compared() => [
        fail(METHODS_EXAMPLES).on("calc.add"),
        fail(METHODS_INVALID_PARAMS).on("calc.div"),
    ] then |r| {
        let d = &r.case(&METHODS_EXAMPLES.instance_id("calc.add")).detail;
        assert!(
            d.contains(r#"expected: the result {"sum":3} for calc.add({"a":1,"b":2}); actual: the result {"sum":4}"#),
            "{d}"
        );
        let d = &r.case(&METHODS_INVALID_PARAMS.instance_id("calc.div")).detail;
        assert!(
            d.contains(r#"expected: error -32602 for calc.div({"a":1,"b":0}); actual: the result {"quotient":null}"#),
            "{d}"
        );
        assert_eq!(r.case(&METHODS_EXAMPLES.instance_id("calc.div")).status, Pass);
        assert_eq!(r.case(&METHODS_INVALID_PARAMS.instance_id("calc.add")).status, Pass);
    };

    /// The program generates a profile (`--print-profile`) whose params
    /// schema and examples the checked-in one lacks: `profile.current`
    /// names each and the fix.
    golden_stale: own("golden-stale") => [fail(GOLDEN_TRANSCRIPTS)] then |r| {
        let d = &r.case(GOLDEN_TRANSCRIPTS.id).detail;
        assert!(
            d.contains("tests/scenario.golden.jsonl: differs") && d.contains("count"),
            "{d}"
        );
    };

    profile_drift: own("profile-drift") => [warn(PROFILE_CURRENT)] then |r| {
        let d = &r.case(PROFILE_CURRENT.id).detail;
        for needle in [
            "methods.status.get.params_schema: on disk",
            r#"the generated example {"verbose":true} is absent on disk"#,
            "./plugin.py --print-profile > kaged-conformance.yaml",
        ] {
            assert!(d.contains(needle), "{needle:?} in {d}");
        }
        assert_eq!(r.case(&METHODS_EXAMPLES.instance_id("status.get")).status, Pass);
    };

    manifest_warning: own("manifest-warning") => [warn(MANIFEST_NO_WARNINGS)] then |r| {
        assert!(r.case(MANIFEST_NO_WARNINGS.id).detail.contains("homepage"));
    };

    /// `command[0]` climbs out of the directory (ADDENDUM §14): a validator
    /// warning, and `plugin install` refuses it.
    not_self_contained: own("not-self-contained") => [
        warn(MANIFEST_NO_WARNINGS),
        fail(LAUNCH_SELF_CONTAINED),
    ] then |r| {
        assert!(r.case(MANIFEST_NO_WARNINGS.id).detail.contains("command_outside_plugin_dir"));
        let d = &r.case(LAUNCH_SELF_CONTAINED.id).detail;
        assert!(d.contains("`../not-self-contained/plugin.py` leaves it"), "{d}");
        assert!(d.contains("cargo kaged pack"), "{d}");
    };

    /// `./plugin` is a symlink out of the directory: uncaged, it starts
    /// where it is, but the copy `plugin install` makes does not (caged, it
    /// does not start at all: `launch.starts` fails).
    symlinked_outside: own("symlinked-outside").uncaged() => [fail(LAUNCH_SELF_CONTAINED)] then |r| {
        let d = &r.case(LAUNCH_SELF_CONTAINED.id).detail;
        assert!(d.contains("`./plugin` does not resolve in the installed copy"), "{d}");
        assert!(d.contains("a symbolic link to `../manifest-warning/plugin.py`"), "{d}");
        assert_eq!(r.case(LAUNCH_STARTS.id).status, Pass);
    };

    /// A plugin that answers `initialize` and nothing else (shutdown, EOF and
    /// SIGTERM ignored): every case that waits on it fails by its timeout, and
    /// the run ends (its duration is measured in `benches/suite.rs`).
    hangs_everywhere_fails_by_the_timeouts: own("hangs-everywhere").scale(0.02).budgets(Budgets::StartupOnly).jobs_compared() => [
        fail(PROTOCOL_PING),
        fail(PROTOCOL_UNKNOWN_METHOD),
        warn(PROTOCOL_NOT_INITIALIZED),
        fail(SYSTEM_PROJECTS_ACTIVATED),
        fail(PROTOCOL_BATCH_REJECTED),
        fail(PROTOCOL_PARSE_ERROR),
        fail(PROTOCOL_IDS_ECHOED),
        fail(PROTOCOL_CONCURRENT_CALLS),
        fail(PROTOCOL_PING_DURING_SLOW_CALL),
        fail(METHODS_ANSWERS).on("status.get").audit("plugin.killed"),
        fail(METHODS_ANSWERS).on("hangs-everywhere.echo").audit("plugin.killed"),
        fail(METHODS_TOOL_VALID_ARGS).on("hangs-everywhere.echo").audit("plugin.killed"),
        fail(METHODS_TOOL_INVALID_ARGS).on("hangs-everywhere.echo").audit("plugin.killed"),
        fail(HOOKS_ANSWERS).on("on_session_start").audit("plugin.hook.timeout"),
        fail(HOOKS_ANSWERS).on("pre_compact").audit("plugin.hook.timeout"),
        fail(COMPACTION_COMPACTOR_CONTRACT).audit("compaction.failed"),
        fail(LIFECYCLE_STDIN_EOF_EXITS).audit("plugin.killed"),
        fail(LIFECYCLE_SHUTDOWN_EXITS_ZERO).audit("plugin.killed"),
    ] then |r| {
        assert_eq!(
            r.case(LIFECYCLE_NO_ORPHANS.id).status,
            Pass,
            "the host's SIGKILL leaves nothing behind"
        );
        let t = r.timeouts.expect("the report states its timeouts");
        // Scaled by 0.02, but for the spec's 10 s to start (`options_at`).
        assert_eq!((t.request_ms, t.hook_ms, t.initialize_ms), (600, 200, 10_000));
        // A budget already judged is not waited out again: with no answer
        // to projects.activated, deactivating is blocked at once.
        let c = r.case(SYSTEM_PROJECTS_DEACTIVATED.id);
        assert_eq!(c.status, Skip, "{}", c.detail);
        assert_eq!(c.caused_by.as_deref(), Some(SYSTEM_PROJECTS_ACTIVATED.id));
    };

    ignores_batch: own("ignores-batch") => [fail(PROTOCOL_BATCH_REJECTED)];

    /// One message at a time: a ping sent while `slow.work` sleeps waits
    /// behind it, past the ping timeout.
    /// `slow.work` also takes two thirds of the request budget: a timing
    /// warning before it is a timeout.
    ping_blocked: own("ping-blocked").budgets(Budgets::WaitsScaled).jobs_compared() => [
        fail(PROTOCOL_PING_DURING_SLOW_CALL),
        warn(TIMING_MARGINS).audit("plugin.method_returned"),
    ] then |r| {
        let d = &r.case(PROTOCOL_PING_DURING_SLOW_CALL.id).detail;
        assert!(d.contains("slow.work") && d.contains("3 missed pings"), "{d}");
        let d = &r.case(TIMING_MARGINS.id).detail;
        assert!(d.contains("slow.work took") && d.contains("more than half of its 1.5s"), "{d}");
    };

    /// Declares a config_schema, accepts any config.
    lax_config: own("lax-config") => [warn(CONFIG_INVALID_REJECTED)] then |r| {
        let d = &r.case(CONFIG_INVALID_REJECTED.id).detail;
        assert!(d.contains("actual: accepted") && d.contains("greeting"), "{d}");
    };

    /// Reads its config only from the first config.update and needs a
    /// system-side `api_token`: correct under ADDENDUM §15, so every case
    /// passes (a suite that never sent the config, or built it from
    /// config_schema alone, failed its tool with -32603).
    config_from_first_update: own("config-from-first-update") => [] then |r| {
        let d = &r.case(CONFIG_UPDATE_ACCEPTED.id).detail;
        assert!(d.contains("api_token") && d.contains("sent right after initialized"), "{d}");
        let d = &r.case(&format!("{}[config-from-first-update.greet]", METHODS_TOOL_VALID_ARGS.id)).detail;
        assert!(d.contains("hello, "), "{d}");
    };

    /// Blocks 2 s in a method at the spec's own budgets (time scale 1):
    /// inside its 30 s, but past what an agent should wait through.
    blocks_two_seconds: own("blocks-two-seconds").scale(1.0) => [
        warn(TIMING_MARGINS).audit("plugin.method_returned"),
    ] then |r| {
        let d = &r.case(TIMING_MARGINS.id).detail;
        assert!(d.contains("report.build took") && d.contains("more than 1.5s") && d.contains("fix:"), "{d}");
    };

    /// Its pre_compact answer is malformed only when a message holds a
    /// code block: one of the payloads `hooks.answers` fires reaches it.
    hook_branch: own("hook-branch") => [
        fail(HOOKS_ANSWERS).on("pre_compact"),
    ] then |r| {
        let d = &r.case(&HOOKS_ANSWERS.instance_id("pre_compact")).detail;
        assert!(d.contains("the payload with a code block") && d.contains("retain") && d.contains("fix:"), "{d}");
        // The rule quoted is the answer shape's, not the hook timeout's.
        let c = r.case(&HOOKS_ANSWERS.instance_id("pre_compact"));
        assert!(c.sentence.starts_with("ADDENDUM §5: Observer answers"), "{}", c.sentence);
    };

    /// Prints a debugging JSON object on stdout before answering: the
    /// failure quotes the line and says why it breaks the wire.
    stdout_json_line: own("stdout-json-line") => [
        fail(METHODS_ANSWERS).on("status.get").audit("plugin.protocol_violation"),
    ] then |r| {
        let d = &r.case(&METHODS_ANSWERS.instance_id("status.get")).detail;
        assert!(
            d.contains("plugin.protocol_violation")
                && d.contains(r#"the plugin sent: `{"debug": true, "state": "about to answer"}`"#)
                && d.contains("fix: write logs and debugging output to stderr"),
            "{d}"
        );
        let c = r.case(&METHODS_ANSWERS.instance_id("status.get"));
        assert_eq!(c.kind, Some(Kind::ProtocolViolation));
        assert!(c.sentence.starts_with("plugin-host.md § Transport: Stdout discipline"), "{}", c.sentence);
    };

    /// Its tool answers -32603 on arguments its schema allows: no domain
    /// error (the rule `fuzz` judges by too).
    tool_internal_error: own("tool-internal-error") => [
        fail(METHODS_TOOL_VALID_ARGS).on("tool-internal-error.file"),
    ] then |r| {
        let d = &r.case(&format!("{}[tool-internal-error.file]", METHODS_TOOL_VALID_ARGS.id)).detail;
        assert!(d.contains("-32603") && d.contains("handler failed"), "{d}");
    };

    /// Never answers config.update: killed at every start, as the daemon
    /// would; the cases that need a session say so and name the cause.
    hangs_on_config: own("hangs-on-config").scale(0.05).budgets(Budgets::ConfigScaled).jobs_compared() => [
        fail(CONFIG_UPDATE_ACCEPTED).audit("plugin.killed"),
        fail(CONFIG_UPDATE_IN_HANDSHAKE_WINDOW),
    ] then |r| {
        let d = &r.case(CONFIG_UPDATE_ACCEPTED.id).detail;
        assert!(d.contains("timed out"), "{d}");
        let d = &r.case(PROTOCOL_PING.id).detail;
        assert!(d.contains("the first config.update") && d.contains("ended the session"), "{d}");
        assert_eq!(r.case(HANDSHAKE_INITIALIZE_VARIANTS.id).status, Pass);
    };

    /// config.update before `initialized` gets -32002 (ADDENDUM §12 and
    /// §15: a plugin must accept it).
    config_after_initialized_only: own("config-after-initialized-only") => [
        fail(CONFIG_UPDATE_IN_HANDSHAKE_WINDOW),
    ] then |r| {
        let d = &r.case(CONFIG_UPDATE_IN_HANDSHAKE_WINDOW.id).detail;
        assert!(d.contains("actual: error -32002"), "{d}");
    };

    /// Exits on an initialize that names projects.
    projects_crash: own("projects-crash") => [fail(HANDSHAKE_INITIALIZE_VARIANTS)] then |r| {
        let d = &r.case(HANDSHAKE_INITIALIZE_VARIANTS.id).detail;
        assert!(d.contains("projects loaded at start") && d.contains("did not expect projects"), "{d}");
    };

    /// projects.activated / projects.deactivated get -32601 (system
    /// methods are MUST, ADDENDUM §15).
    ignores_projects: own("ignores-projects").jobs_compared() => [
        fail(SYSTEM_PROJECTS_ACTIVATED),
        fail(SYSTEM_PROJECTS_DEACTIVATED),
    ] then |r| {
        let d = &r.case(SYSTEM_PROJECTS_ACTIVATED.id).detail;
        assert!(d.contains("actual: error -32601"), "{d}");
    };

    /// Its id-null answers are tapped as answers to the suite's probe
    /// (a probe line could have prompted them), not audited.
    wrong_ids: own("wrong-ids") => [fail(PROTOCOL_IDS_ECHOED)];

    /// Exits in its method when told `storage_available: false`.
    storage_crash: own("storage-crash") => [fail(HANDSHAKE_INITIALIZE_VARIANTS)] then |r| {
        let d = &r.case(HANDSHAKE_INITIALIZE_VARIANTS.id).detail;
        assert!(d.contains("its methods still answer") && d.contains("notes.list"), "{d}");
    };

    /// Answers `shutdown`, answers an id nobody sent, sends a batch: what
    /// the host audits becomes three verdicts.
    wire_strays: own("wire-strays").jobs_compared() => [
        fail(PROTOCOL_NO_ANSWER_TO_NOTIFICATIONS).audit("plugin.protocol_violation"),
        fail(PROTOCOL_NO_UNKNOWN_RESPONSE_IDS).audit("plugin.protocol_violation"),
        fail(PROTOCOL_NO_UNPROMPTED_BATCHES).audit("plugin.protocol_violation"),
    ] then |r| {
        let d = &r.case(PROTOCOL_NO_UNKNOWN_RESPONSE_IDS.id).detail;
        assert!(d.contains("answer with id 4242"), "{d}");
        let d = &r.case(PROTOCOL_NO_ANSWER_TO_NOTIFICATIONS.id).detail;
        assert!(d.contains("id null"), "{d}");
    };

    reused_request_ids: own("reused-request-ids") => [
        fail(PROTOCOL_REQUEST_IDS_MONOTONIC).audit("plugin.protocol_violation"),
    ] then |r| {
        let d = &r.case(PROTOCOL_REQUEST_IDS_MONOTONIC.id).detail;
        assert!(d.contains("first request has id 7, not 1"), "{d}");
    };

    /// Answers every probe at once and wrongly (id 0 where it cannot echo
    /// the id, a result for an unknown method): every verdict comes from
    /// the wrong answer, not from a timeout (`benches/suite.rs` times it
    /// at time scale 1).
    wrong_but_prompt: own("wrong-but-prompt") => [
        fail(PROTOCOL_UNKNOWN_METHOD),
        warn(PROTOCOL_NOT_INITIALIZED),
        fail(PROTOCOL_BATCH_REJECTED),
        fail(PROTOCOL_PARSE_ERROR),
        fail(PROTOCOL_IDS_ECHOED),
        fail(PROTOCOL_NO_UNKNOWN_RESPONSE_IDS),
    ] then |r| {
        for id in [PROTOCOL_BATCH_REJECTED.id, PROTOCOL_PARSE_ERROR.id] {
            let d = &r.case(id).detail;
            assert!(d.contains("\"id\":0"), "{id}: what arrived is in the detail: {d}");
        }
        let d = &r.case(PROTOCOL_IDS_ECHOED.id).detail;
        assert!(d.contains("at once") && d.contains("\"id\":0"), "{d}");
        assert!(r.case(PROTOCOL_UNKNOWN_METHOD.id).detail.contains("actual: result null"));
        // Fail-fast: every verdict came from what the plugin sent (or from
        // the run's record), none from waiting out a budget.
        for c in r.cases.iter().filter(|c| c.status == Fail) {
            assert!(
                matches!(
                    c.ended_by,
                    Some(EndedBy::Answer | EndedBy::StrayAnswer | EndedBy::NoWait)
                ),
                "{} ended by {:?}",
                c.id,
                c.ended_by
            );
        }
        assert_eq!(r.case(PROTOCOL_IDS_ECHOED.id).ended_by, Some(EndedBy::StrayAnswer));
    };

    lax_tool: own("lax-tool") => [
        fail(METHODS_TOOL_INVALID_ARGS).on("lax-tool.shout").audit("plugin.method_returned"),
    ];

    ignores_eof: own("ignores-eof") => [fail(LIFECYCLE_STDIN_EOF_EXITS).audit("plugin.killed")];

    stderr_jsonrpc: own("stderr-jsonrpc") => [fail(PROTOCOL_NO_JSONRPC_ON_STDERR)];

    undeclared_notifier: own("undeclared-notifier") => [
        warn(NOTIFICATIONS_DECLARED_ONLY).audit("plugin.notification"),
    ];

    rejects_config: own("rejects-config") => [
        fail(CONFIG_UPDATE_ACCEPTED).audit("plugin.method_returned"),
        fail(CONFIG_UPDATE_IN_HANDSHAKE_WINDOW),
    ];

    hook_hangs: own("hook-hangs").budgets(Budgets::WaitsScaled).jobs_compared() => [
        fail(HOOKS_ANSWERS).on("on_session_start").audit("plugin.hook.timeout"),
    ];

    storage_snooper: own("storage-snooper") => [
        fail(STORAGE_NO_DENIALS).audit("plugin.storage_denied"),
    ];

    bad_compactor_emits_the_fallback_chain_in_order: own("bad-compactor") => [
        fail(COMPACTION_COMPACTOR_CONTRACT).audit("compaction.failed"),
    ] then |r| {
        let c = r.case(COMPACTION_COMPACTOR_CONTRACT.id);
        let i = c
            .audit_events
            .iter()
            .position(|e| e == "compaction.failed")
            .expect("failed");
        assert_eq!(
            c.audit_events.get(i + 1).map(String::as_str),
            Some("compaction.completed")
        );
        assert!(c.detail.contains("always-keep message `msg_002`"), "{}", c.detail);
    };

    /// One fault, one root: the manifest lacks `kaged:storage:write`, which
    /// the plugin claims and uses. The handshake case is the root (kind
    /// `capability_not_declared`, the line to add); the storage denial
    /// follows from it and says so in every format.
    missing_capability: own("missing-capability").jobs_compared() => [
        fail(HANDSHAKE_CAPABILITIES_WITHIN_MANIFEST).audit("plugin.capability_overreach"),
        fail(STORAGE_NO_DENIALS).audit("plugin.storage_denied"),
    ] then |r| {
        let root = r.case(HANDSHAKE_CAPABILITIES_WITHIN_MANIFEST.id);
        assert_eq!(root.kind, Some(Kind::CapabilityNotDeclared));
        assert_eq!(root.caused_by, None);
        assert_eq!(root.ended_by, Some(EndedBy::Answer));
        assert!(
            root.detail.contains("under `capabilities:` in kaged-plugin.yaml:\n  - kaged:storage:write"),
            "{}",
            root.detail
        );
        let follower = r.case(STORAGE_NO_DENIALS.id);
        assert_eq!(follower.kind, Some(Kind::CapabilityNotDeclared));
        assert_eq!(follower.caused_by.as_deref(), Some(HANDSHAKE_CAPABILITIES_WITHIN_MANIFEST.id));
        assert!(!follower.detail.contains("fix:"), "{}", follower.detail);
        // The root is listed first, its follower right after it.
        let order: Vec<&str> = r.failures_root_first().iter().map(|c| c.id.as_str()).collect();
        assert_eq!(order, [HANDSHAKE_CAPABILITIES_WITHIN_MANIFEST.id, STORAGE_NO_DENIALS.id]);
        let human = render_human(r, false, false);
        assert!(human.contains("follows from: handshake.capabilities_within_manifest"), "{human}");
        let json: serde_json::Value = serde_json::from_str(&r.to_json()).expect("json");
        let case = |id: &str| json["cases"].as_array().and_then(|c| c.iter().find(|c| c["id"] == id)).cloned().unwrap_or_default();
        assert_eq!(case(STORAGE_NO_DENIALS.id)["caused_by"], HANDSHAKE_CAPABILITIES_WITHIN_MANIFEST.id);
        assert_eq!(case(STORAGE_NO_DENIALS.id)["kind"], "capability_not_declared");
        assert!(render_junit(r).contains("type=\"capability_not_declared\""));
        let tap = render_tap(r);
        assert!(tap.contains("  caused_by: \"handshake.capabilities_within_manifest\""), "{tap}");
        let md = render_markdown(r);
        assert!(md.contains("follows from `handshake.capabilities_within_manifest`"), "{md}");
    };

    /// Answers written but never flushed: the handshake times out with
    /// nothing on stdout, and the detail names the likely cause and the fix.
    unflushed_stdout: own("unflushed-stdout").budgets(Budgets::ExitOnly).jobs_compared() => [
        fail(HANDSHAKE_ANSWERS_IN_TIME).audit("plugin.initialize_timeout"),
    ] then |r| {
        let c = r.case(HANDSHAKE_ANSWERS_IN_TIME.id);
        assert_eq!(c.kind, Some(Kind::Timeout));
        assert_eq!(c.ended_by, Some(EndedBy::Timeout));
        assert!(c.detail.contains("still in its stdout buffer") && c.detail.contains("flush=True"), "{}", c.detail);
        // Every case that needed a session follows from the failed start.
        let blocked = r.case(PROTOCOL_PING.id);
        assert_eq!(blocked.status, Skip);
        assert_eq!(blocked.kind, Some(Kind::Blocked));
        assert!(blocked.caused_by.is_some(), "{blocked:?}");
    };

    // Plugins that work uncaged and fail in the cage, each with the
    // capability it lacks named from its stderr (run with --cage require).

    writes_home: own("writes-home").caged() => [
        fail(LAUNCH_STARTS).audit("plugin.crashed"),
        fail(CAGE_STARTS_CAGED).audit("plugin.crashed"),
    ] then |r| {
        for id in [CAGE_STARTS_CAGED.id, LAUNCH_STARTS.id] {
            let d = &r.case(id).detail;
            assert!(
                d.contains("looks caused by the cage: EROFS on ")
                    && d.contains(".writes-home-state")
                    && d.contains("is its HOME and read-only in the cage")
                    && d.contains("`write:fs:"),
                "{id}: {d}"
            );
        }
    };

    /// A write outside the grants (the reference memory plugin's bug): the
    /// call answers an error the cage caused, which fails the case however
    /// well-formed the error, with the exact grant to declare.
    writes_config_root: own("writes-config-root").caged().jobs_compared() => [
        fail(METHODS_ANSWERS).on("memory.store"),
    ] then |r| {
        // The slow-call probe calls memory.store too, but its error comes
        // back at once: nothing was slow, so it skips.
        assert_eq!(r.case(PROTOCOL_PING_DURING_SLOW_CALL.id).status, Skip);
        let c = r.case(&METHODS_ANSWERS.instance_id("memory.store"));
        assert_eq!(c.kind, Some(Kind::CageDenied), "{c:?}");
        assert_eq!(c.caused_by, None);
        assert!(c.detail.contains("  - write:fs:config:/memory"), "{}", c.detail);
        assert!(
            c.detail.contains("EROFS on ")
                && c.detail.contains("under the config root")
                && c.detail.contains("declare `write:fs:config:/memory`"),
            "{}",
            c.detail
        );
        assert_eq!(r.case(CAGE_STARTS_CAGED.id).status, Pass);
    };

    reads_undeclared: own("reads-undeclared").caged() => [
        fail(LAUNCH_STARTS).audit("plugin.crashed"),
        fail(CAGE_STARTS_CAGED).audit("plugin.crashed"),
    ] then |r| {
        let d = &r.case(CAGE_STARTS_CAGED.id).detail;
        assert!(
            d.contains("ENOENT on /etc/passwd") && d.contains("declare `read:fs:/etc/passwd`"),
            "{d}"
        );
    };

    needs_network: own("needs-network").caged() => [
        fail(LAUNCH_STARTS).audit("plugin.crashed"),
        fail(CAGE_STARTS_CAGED).audit("plugin.crashed"),
    ] then |r| {
        let d = &r.case(CAGE_STARTS_CAGED.id).detail;
        assert!(
            d.contains("ENETUNREACH: the cage has no network") && d.contains("`net:<host>:<port>`"),
            "{d}"
        );
    };

    // The host-sim's fixtures (`kaged-host-sim/tests/fixtures/plugins/`,
    // most on `_lib/kproto.py`).

    silent_times_out_and_the_rest_is_skipped: host("silent").budgets(Budgets::ExitOnly).jobs_compared() => [
        fail(HANDSHAKE_ANSWERS_IN_TIME).audit("plugin.initialize_timeout"),
    ] then |r| {
        assert!(r
            .case(HANDSHAKE_ANSWERS_IN_TIME.id)
            .audit_events
            .contains(&"plugin.killed".to_string()));
        let ping = r.case(PROTOCOL_PING.id);
        assert_eq!(ping.status, Skip);
        assert!(ping.detail.contains("does not answer initialize"), "{}", ping.detail);
    };

    api_mismatch_fails_one_case_and_the_rest_runs_leniently: host("api-mismatch").kproto() => [
        fail(HANDSHAKE_API_VERSION_MATCHES).audit("plugin.api_mismatch"),
    ] then |r| {
        assert_eq!(r.case(HANDSHAKE_NAME_MATCHES.id).status, Pass);
        assert_eq!(r.case(PROTOCOL_PING.id).status, Pass);
        assert_eq!(r.case(&METHODS_ANSWERS.instance_id("status.get")).status, Pass);
        assert_eq!(r.case(LIFECYCLE_SHUTDOWN_EXITS_ZERO.id).status, Pass);
    };

    name_mismatch: host("name-mismatch").kproto() => [
        fail(HANDSHAKE_NAME_MATCHES).audit("plugin.name_mismatch"),
    ] then |r| {
        assert!(r.case(HANDSHAKE_NAME_MATCHES.id).detail.contains("someone-else"));
        assert_eq!(r.case(PROTOCOL_UNKNOWN_METHOD.id).status, Pass);
    };

    version_mismatch: host("version-mismatch").kproto() => [
        fail(HANDSHAKE_VERSION_MATCHES).audit("initialize.version_mismatch"),
    ];

    capability_overreach: host("capability-overreach").kproto() => [
        fail(HANDSHAKE_CAPABILITIES_WITHIN_MANIFEST).audit("plugin.capability_overreach"),
    ] then |r| {
        assert!(r
            .case(HANDSHAKE_CAPABILITIES_WITHIN_MANIFEST.id)
            .detail
            .contains("exec:bash:/usr/bin"));
    };

    speaks_before_initialize: host("speaks-before-initialize").jobs_compared() => [
        fail(HANDSHAKE_SILENT_BEFORE_INITIALIZE).audit("plugin.protocol_violation"),
    ] then |r| {
        assert_eq!(r.case(LIFECYCLE_STDIN_EOF_EXITS.id).status, Skip);
    };

    malformed_initialize_result: host("malformed-initialize-result").kproto() => [
        fail(HANDSHAKE_WELL_FORMED).audit("plugin.protocol_violation"),
    ] then |r| {
        assert_eq!(r.case(HANDSHAKE_NAME_MATCHES.id).status, Skip);
        assert_eq!(r.case(PROTOCOL_PING.id).status, Pass, "lenient sessions still run");
    };

    initialize_error: host("initialize-error").kproto() => [
        fail(HANDSHAKE_WELL_FORMED).audit("plugin.protocol_violation"),
    ];

    stdout_noise: host("stdout-noise").kproto() => [
        fail(HANDSHAKE_NO_STDOUT_NOISE).audit("plugin.stdout_noise"),
    ];

    oversize_line: host("oversize-line").kproto() => [
        fail(METHODS_ANSWERS).on("big.send").audit("protocol.oversize_message"),
        fail(PROTOCOL_NO_OVERSIZE_LINES).audit("protocol.oversize_message"),
    ] then |r| {
        // The shared session was killed; later cases got a new one.
        assert_eq!(r.case(LIFECYCLE_SHUTDOWN_EXITS_ZERO.id).status, Pass);
    };

    batch_sender: host("batch-sender").kproto() => [
        fail(METHODS_ANSWERS).on("batch.send").audit("plugin.protocol_violation"),
        fail(PROTOCOL_NO_UNPROMPTED_BATCHES).audit("plugin.protocol_violation"),
    ];

    notification_flood: host("notification-flood").kproto() => [
        warn(NOTIFICATIONS_NO_FLOOD).audit("plugin.notification_flood"),
    ];

    /// `wrong-but-prompt`'s wrong answers, and it ignores `shutdown`: the
    /// barrier judges that once, and every other session is ended at once
    /// (said in its detail) instead of waiting out the budget again.
    ignores_shutdown: own("ignores-shutdown").jobs_compared() => [
        fail(PROTOCOL_UNKNOWN_METHOD),
        warn(PROTOCOL_NOT_INITIALIZED),
        fail(PROTOCOL_BATCH_REJECTED),
        fail(PROTOCOL_PARSE_ERROR),
        fail(PROTOCOL_IDS_ECHOED),
        fail(PROTOCOL_NO_UNKNOWN_RESPONSE_IDS),
        fail(LIFECYCLE_SHUTDOWN_EXITS_ZERO),
    ] then |r| {
        for id in [PROTOCOL_PING.id, PROTOCOL_BATCH_REJECTED.id, LAUNCH_SELF_CONTAINED.id] {
            let c = r.case(id);
            assert!(c.detail.contains("ended at once"), "{id}: {}", c.detail);
            assert!(c.audit_events.iter().any(|e| e == "plugin.killed"), "{id}: {:?}", c.audit_events);
        }
        // The cases whose verdict is how the plugin stops wait the ladder.
        for id in [LIFECYCLE_SHUTDOWN_EXITS_ZERO.id, LIFECYCLE_NO_ORPHANS.id, LIFECYCLE_STDIN_EOF_EXITS.id] {
            assert!(!r.case(id).detail.contains("ended at once"), "{id}");
        }
    };

    ignores_shutdown_and_sigterm: host("ignores-shutdown-and-sigterm").kproto().budgets(Budgets::StartupAndPing).jobs_compared() => [
        fail(LIFECYCLE_SHUTDOWN_EXITS_ZERO).audit("plugin.killed"),
        fail(LIFECYCLE_STDIN_EOF_EXITS).audit("plugin.killed"),
    ];

    crashes_on_call: host("crashes-on-call").kproto().jobs_compared() => [
        fail(METHODS_ANSWERS).on("crash.now").audit("plugin.crashed"),
    ];

    never_answers_a_method: host("never-answers-a-method").kproto().jobs_compared() => [
        fail(METHODS_ANSWERS).on("hang.forever").audit("plugin.killed"),
    ] then |r| {
        assert_eq!(
            r.case(&METHODS_ANSWERS.instance_id("status.get")).status,
            Pass,
            "a new session after the kill"
        );
    };

    child_spawning: host("child-spawning").kproto() => [
        fail(LIFECYCLE_NO_ORPHANS).audit("plugin.exited"),
    ];

    exits_at_once: host("exits-at-once").jobs_compared() => [
        fail(LAUNCH_STARTS).audit("plugin.crashed"),
    ] then |r| {
        let d = &r.case(LAUNCH_STARTS.id).detail;
        assert!(
            d.contains("exits at once (exit code 1)")
                && d.contains("cannot start: missing configuration"),
            "{d}"
        );
    };

    not_executable: host("not-executable") => [fail(LAUNCH_COMMAND_EXISTS)] then |r| {
        assert!(r.case(LAUNCH_COMMAND_EXISTS.id).detail.contains("not executable"));
        assert_eq!(r.case(LAUNCH_STARTS.id).status, Skip);
    };

    missing_command: host("missing-command") => [fail(LAUNCH_COMMAND_EXISTS)] then |r| {
        assert!(r.case(LAUNCH_COMMAND_EXISTS.id).detail.contains("not found"));
    };

    methods_drift: host("methods-drift").kproto() => [
        warn(HANDSHAKE_METHODS_WITHIN_MANIFEST),
        warn(HANDSHAKE_METHODS_COMPLETE),
    ] then |r| {
        assert_eq!(r.case(&METHODS_ANSWERS.instance_id("missing.thing")).status, Skip);
    };

    // A plugin directory with only a manifest.

    /// One tool over the cap: a warning naming both numbers.
    many_tools: manifest(include_str!("fixtures/manifests/many-tools.yaml")) => [
        fail(LAUNCH_COMMAND_EXISTS),
        warn(MANIFEST_TOOL_COUNT),
    ] then |r| {
        let d = &r.case(MANIFEST_TOOL_COUNT.id).detail;
        assert!(d.contains("at most 64 tools") && d.contains("65 tools"), "{d}");
    };

    invalid_manifest_is_a_failed_case_not_a_crash: manifest("name: Not_Valid\nversion: one\n") => [
        fail(MANIFEST_VALID),
    ] then |r| {
        assert!(r
            .cases
            .iter()
            .filter(|c| c.id != MANIFEST_VALID.id)
            .all(|c| c.status == Skip));
        assert_eq!(r.exit_code(false), 1);
    };
}

#[test]
fn every_case_has_a_fail_proof() {
    let proven: BTreeSet<(&str, &str)> = FAIL_PROOFS
        .iter()
        .flat_map(Proof::expected)
        .map(|b| (b.case.id, b.status.as_str()))
        .collect();
    let missing: Vec<String> = CATALOGUE
        .iter()
        .filter(|d| {
            let verdict = if d.level == Level::Must { Fail } else { Warn };
            !proven.contains(&(d.id, verdict.as_str()))
        })
        .map(|d| format!("{} ({})", d.id, d.level.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "cases without a fixture proving their fail/warn verdict: {missing:?}"
    );
}

#[test]
fn the_storage_db_option_keeps_the_plugins_tables() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("storage.sqlite3");
    let opts = Options {
        storage_db: Some(db.clone()),
        selection: Selection {
            only: vec![Pattern::new("methods.*"), Pattern::new("storage.*")],
            skip: Vec::new(),
        },
        ..support::options()
    };
    let r = run_suite(&own_fixture("storage-snooper"), &opts).expect("runs");
    assert_eq!(r.case(STORAGE_NO_DENIALS.id).status, Fail);
    assert!(db.is_file(), "the broker wrote {}", db.display());
    let bad = Options {
        storage_db: Some(tmp.path().join("no/such/dir/db.sqlite3")),
        ..support::options()
    };
    let e = run_suite(&own_fixture("conforming"), &bad).expect_err("cannot open");
    assert!(
        e.to_string()
            .starts_with("cannot open the storage database"),
        "{e}"
    );
}
