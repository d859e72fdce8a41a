//! Every case of the catalogue has a broken fixture that proves its fail
//! (MUST) or warn (SHOULD) verdict, bowtie style: each fixture here breaks
//! exactly one rule, and [`every_case_has_a_fail_proof`] checks that the
//! expectations of the self-tests (this file, `own_fixtures.rs`,
//! `self_test.rs` and the shared gaps of `common/mod.rs`) name every
//! catalogue id.

mod common;

use std::collections::BTreeSet;

use common::{assert_broken, own_fixture, Expected};
use kaged_conformance::catalogue::{Level, CATALOGUE};
use kaged_conformance::report::Status::{Fail, Pass, Warn};
use kaged_conformance::selection::{Pattern, Selection};
use kaged_conformance::{run_suite, Options};
use kaged_host_sim::TimeScale;

#[test]
fn bad_ping() {
    let r = common::run(own_fixture("bad-ping"));
    assert_broken(&r, &[("protocol.ping", Fail, None)]);
    assert!(
        r.case("protocol.ping").detail.contains("healthy"),
        "{}",
        r.case("protocol.ping").detail
    );
}

#[test]
fn unknown_method_ok() {
    let r = common::run(own_fixture("unknown-method-ok"));
    assert_broken(&r, &[("protocol.unknown_method", Fail, None)]);
    assert!(r
        .case("protocol.unknown_method")
        .detail
        .contains("actual: result null"));
}

#[test]
fn drops_when_busy() {
    let r = common::run(own_fixture("drops-when-busy"));
    assert_broken(&r, &[("protocol.concurrent_calls", Fail, None)]);
    assert!(r
        .case("protocol.concurrent_calls")
        .detail
        .contains("unanswered within"));
}

#[test]
fn schema_lies() {
    let r = common::run(own_fixture("schema-lies"));
    assert_broken(
        &r,
        &[(
            "methods.tool_valid_args[schema-lies.search]",
            Fail,
            Some("plugin.method_returned"),
        )],
    );
    let d = &r.case("methods.tool_valid_args[schema-lies.search]").detail;
    assert!(
        d.contains("the schema is incomplete") && d.contains("as agent `primary`"),
        "{d}"
    );
    // The same tool still answers, and rejects arguments that break its schema.
    assert_eq!(r.case("methods.answers[schema-lies.search]").status, Pass);
    assert_eq!(
        r.case("methods.tool_invalid_args[schema-lies.search]")
            .status,
        Pass
    );
}

#[test]
fn hook_errors_get_one_verdict_per_hook() {
    let r = common::run(own_fixture("hook-errors"));
    assert_broken(
        &r,
        &[
            (
                "hooks.answers[on_session_start]",
                Fail,
                Some("plugin.hook.failed"),
            ),
            (
                "hooks.answers[post_compact]",
                Fail,
                Some("plugin.hook.returned"),
            ),
        ],
    );
    assert_eq!(r.case("hooks.answers[on_session_idle]").status, Pass);
    assert!(r
        .case("hooks.answers[post_compact]")
        .detail
        .contains("{\"retain\":\"msg_002\"}"));
}

#[test]
fn manifest_warning() {
    let r = common::run(own_fixture("manifest-warning"));
    assert_broken(&r, &[("manifest.no_warnings", Warn, None)]);
    assert!(r.case("manifest.no_warnings").detail.contains("homepage"));
}

/// A plugin that answers `initialize` and nothing else (shutdown, EOF and
/// SIGTERM ignored): every case that waits on it fails by its timeout, and
/// the run ends (its duration is measured in `benches/suite.rs`).
#[test]
fn hangs_everywhere_fails_by_the_timeouts() {
    let opts = Options {
        time_scale: TimeScale::new(0.02).expect("scale"),
        ..Options::default()
    };
    let r = run_suite(&own_fixture("hangs-everywhere"), &opts).expect("runs");
    let expected: Vec<Expected> = vec![
        ("protocol.ping", Fail, None),
        ("protocol.unknown_method", Fail, None),
        ("protocol.not_initialized", Warn, None),
        ("protocol.batch_rejected", Fail, None),
        ("protocol.parse_error", Fail, None),
        ("protocol.ids_echoed", Fail, None),
        ("protocol.concurrent_calls", Fail, None),
        ("methods.answers[status.get]", Fail, Some("plugin.killed")),
        (
            "methods.answers[hangs-everywhere.echo]",
            Fail,
            Some("plugin.killed"),
        ),
        (
            "methods.tool_valid_args[hangs-everywhere.echo]",
            Fail,
            Some("plugin.killed"),
        ),
        (
            "methods.tool_invalid_args[hangs-everywhere.echo]",
            Fail,
            Some("plugin.killed"),
        ),
        (
            "hooks.answers[on_session_start]",
            Fail,
            Some("plugin.hook.timeout"),
        ),
        (
            "hooks.answers[pre_compact]",
            Fail,
            Some("plugin.hook.timeout"),
        ),
        (
            "compaction.compactor_contract",
            Fail,
            Some("compaction.failed"),
        ),
        ("config.update_accepted", Warn, Some("plugin.killed")),
        ("lifecycle.stdin_eof_exits", Fail, Some("plugin.killed")),
        ("lifecycle.shutdown_exits_zero", Fail, Some("plugin.killed")),
    ];
    assert_broken(&r, &expected);
    assert_eq!(
        r.case("lifecycle.no_orphans").status,
        Pass,
        "the host's SIGKILL leaves nothing behind"
    );
    let t = r.timeouts.expect("the report states its timeouts");
    assert_eq!((t.request_ms, t.hook_ms, t.initialize_ms), (600, 200, 200));
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
        ..common::options()
    };
    let r = run_suite(&own_fixture("storage-snooper"), &opts).expect("runs");
    assert_eq!(r.case("storage.no_denials").status, Fail);
    assert!(db.is_file(), "the broker wrote {}", db.display());
    let bad = Options {
        storage_db: Some(tmp.path().join("no/such/dir/db.sqlite3")),
        ..common::options()
    };
    let e = run_suite(&own_fixture("conforming"), &bad).expect_err("cannot open");
    assert!(
        e.to_string()
            .starts_with("cannot open the storage database"),
        "{e}"
    );
}

#[test]
fn every_case_has_a_fail_proof() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/");
    let text: String = [
        "fail_proofs.rs",
        "own_fixtures.rs",
        "self_test.rs",
        "common/mod.rs",
    ]
    .iter()
    .map(|f| std::fs::read_to_string(format!("{dir}{f}")).expect("test source"))
    .collect();
    // `("case.id"` or `("case.id[name]"`, then `, Fail` / `, Warn` (optionally `Status::`).
    let re = regex::Regex::new(
        r#"\(\s*"([a-z_]+\.[a-z_]+)(?:\[[^\]"]*\])?",\s*(?:Status::)?(Fail|Warn)\b"#,
    )
    .expect("regex");
    let proven: BTreeSet<(String, String)> = re
        .captures_iter(&text)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect();
    let missing: Vec<String> = CATALOGUE
        .iter()
        .filter(|d| {
            let verdict = if d.level == Level::Must {
                "Fail"
            } else {
                "Warn"
            };
            !proven.contains(&(d.id.to_string(), verdict.to_string()))
        })
        .map(|d| format!("{} ({})", d.id, d.level.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "cases without a fixture proving their fail/warn verdict: {missing:?}"
    );
}
