//! The suite against deliberately broken plugins: each gets exactly its
//! expected failing cases and audit events; conforming plugins pass.

mod common;

use common::{assert_broken, host_fixture, options, own_fixture, run, Expected, KPROTO_GAPS};
use kaged_conformance::report::Status::{Fail, Pass, Skip, Warn};
use kaged_conformance::selection::Baseline;
use kaged_conformance::{run_suite, Options};

fn with_gaps(extra: &[Expected]) -> Vec<Expected> {
    let mut v = KPROTO_GAPS.to_vec();
    v.extend_from_slice(extra);
    v
}

#[test]
fn conforming_passes_every_case() {
    let r = run(own_fixture("conforming"));
    assert_eq!(
        r.summary.failed + r.summary.warned + r.summary.skipped,
        0,
        "\n{}",
        kaged_conformance::report::render_human(&r, false, true)
    );
    assert_eq!(r.exit_code(true), 0);
    assert_eq!(r.case("compaction.compactor_contract").status, Pass);
    assert_eq!(
        r.case("methods.tool_invalid_args[conforming.shout]").status,
        Pass
    );
    // The tool needs an agent context (-32006 without one): tools are called as an agent.
    let tool = &r.case("methods.tool_valid_args[conforming.shout]").detail;
    assert!(
        tool.contains("as agent `primary` of project `conformance-project`")
            && tool.contains("CONFORMANCE!"),
        "{tool}"
    );
    // A custom method is a daemon-level call; its well-formed -32006 is an answer.
    let custom = &r.case("methods.answers[notes.count]").detail;
    assert!(
        custom.contains("with a daemon-level _context answered a well-formed error -32006"),
        "{custom}"
    );
}

#[test]
fn good_passes_but_for_its_known_non_conformities() {
    // The host-sim's `good` fixture is not fully conforming (reported):
    // its manifest overrides daemon-controlled env vars on purpose and it
    // does not validate tool arguments, on top of the helper's gaps.
    let text = "manifest.no_warnings\nprotocol.not_initialized\nprotocol.batch_rejected\nprotocol.parse_error\nmethods.tool_invalid_args[good.echo]\nconfig.update_accepted\n";
    let opts = Options {
        baseline: Some(Baseline::parse(text, "good.baseline")),
        ..options()
    };
    let r = run_suite(&host_fixture("good"), &opts).expect("runs");
    assert_eq!(
        r.summary.failed,
        0,
        "\n{}",
        kaged_conformance::report::render_human(&r, false, true)
    );
    assert_eq!(r.summary.warned, 6);
    for c in r.cases.iter().filter(|c| c.status == Warn) {
        assert!(
            c.detail
                .starts_with("known failure (listed in good.baseline)"),
            "{}",
            c.detail
        );
    }
    assert_eq!(r.case("hooks.answers[on_session_start]").status, Pass);
    assert_eq!(r.case("methods.tool_valid_args[good.echo]").status, Pass);
    assert_eq!(r.case("notifications.declared_only").status, Pass);
}

#[test]
fn silent_times_out_and_the_rest_is_skipped() {
    let r = run(host_fixture("silent"));
    assert_broken(
        &r,
        &[(
            "handshake.answers_in_time",
            Fail,
            Some("plugin.initialize_timeout"),
        )],
    );
    assert!(r
        .case("handshake.answers_in_time")
        .audit_events
        .contains(&"plugin.killed".to_string()));
    let ping = r.case("protocol.ping");
    assert_eq!(ping.status, Skip);
    assert!(
        ping.detail.contains("does not answer initialize"),
        "{}",
        ping.detail
    );
}

#[test]
fn api_mismatch_fails_one_case_and_the_rest_runs_leniently() {
    let r = run(host_fixture("api-mismatch"));
    assert_broken(
        &r,
        &with_gaps(&[(
            "handshake.api_version_matches",
            Fail,
            Some("plugin.api_mismatch"),
        )]),
    );
    assert_eq!(r.case("handshake.name_matches").status, Pass);
    assert_eq!(r.case("protocol.ping").status, Pass);
    assert_eq!(r.case("methods.answers[status.get]").status, Pass);
    assert_eq!(r.case("lifecycle.shutdown_exits_zero").status, Pass);
}

#[test]
fn name_mismatch() {
    let r = run(host_fixture("name-mismatch"));
    assert_broken(
        &r,
        &with_gaps(&[("handshake.name_matches", Fail, Some("plugin.name_mismatch"))]),
    );
    assert!(r
        .case("handshake.name_matches")
        .detail
        .contains("someone-else"));
    assert_eq!(r.case("protocol.unknown_method").status, Pass);
}

#[test]
fn version_mismatch() {
    let r = run(host_fixture("version-mismatch"));
    assert_broken(
        &r,
        &with_gaps(&[(
            "handshake.version_matches",
            Fail,
            Some("plugin.version_mismatch"),
        )]),
    );
}

#[test]
fn capability_overreach() {
    let r = run(host_fixture("capability-overreach"));
    assert_broken(
        &r,
        &with_gaps(&[(
            "handshake.capabilities_within_manifest",
            Fail,
            Some("plugin.capability_overreach"),
        )]),
    );
    assert!(r
        .case("handshake.capabilities_within_manifest")
        .detail
        .contains("exec:bash:/usr/bin"));
}

#[test]
fn speaks_before_initialize() {
    let r = run(host_fixture("speaks-before-initialize"));
    assert_broken(
        &r,
        &[(
            "handshake.silent_before_initialize",
            Fail,
            Some("plugin.protocol_violation"),
        )],
    );
    assert_eq!(r.case("lifecycle.stdin_eof_exits").status, Skip);
}

#[test]
fn malformed_initialize_result() {
    let r = run(host_fixture("malformed-initialize-result"));
    assert_broken(
        &r,
        &with_gaps(&[(
            "handshake.well_formed",
            Fail,
            Some("plugin.protocol_violation"),
        )]),
    );
    assert_eq!(r.case("handshake.name_matches").status, Skip);
    assert_eq!(
        r.case("protocol.ping").status,
        Pass,
        "lenient sessions still run"
    );
}

#[test]
fn initialize_error() {
    let r = run(host_fixture("initialize-error"));
    assert_broken(
        &r,
        &with_gaps(&[(
            "handshake.well_formed",
            Fail,
            Some("plugin.protocol_violation"),
        )]),
    );
}

#[test]
fn stdout_noise() {
    let r = run(host_fixture("stdout-noise"));
    assert_broken(
        &r,
        &with_gaps(&[(
            "handshake.no_stdout_noise",
            Fail,
            Some("plugin.stdout_noise"),
        )]),
    );
}

#[test]
fn oversize_line() {
    let r = run(host_fixture("oversize-line"));
    assert_broken(
        &r,
        &with_gaps(&[
            (
                "methods.answers[big.send]",
                Fail,
                Some("protocol.oversize_message"),
            ),
            (
                "protocol.no_oversize_lines",
                Fail,
                Some("protocol.oversize_message"),
            ),
        ]),
    );
    // The shared session was killed; later cases got a new one.
    assert_eq!(r.case("lifecycle.shutdown_exits_zero").status, Pass);
}

#[test]
fn batch_sender() {
    let r = run(host_fixture("batch-sender"));
    assert_broken(
        &r,
        &with_gaps(&[(
            "methods.answers[batch.send]",
            Fail,
            Some("plugin.protocol_violation"),
        )]),
    );
}

#[test]
fn notification_flood() {
    let r = run(host_fixture("notification-flood"));
    assert_broken(
        &r,
        &with_gaps(&[(
            "notifications.no_flood",
            Warn,
            Some("plugin.notification_flood"),
        )]),
    );
}

#[test]
fn ignores_shutdown_and_sigterm() {
    let r = run(host_fixture("ignores-shutdown-and-sigterm"));
    assert_broken(
        &r,
        &with_gaps(&[
            ("lifecycle.shutdown_exits_zero", Fail, Some("plugin.killed")),
            ("lifecycle.stdin_eof_exits", Fail, Some("plugin.killed")),
        ]),
    );
}

#[test]
fn crashes_on_call() {
    let r = run(host_fixture("crashes-on-call"));
    assert_broken(
        &r,
        &with_gaps(&[("methods.answers[crash.now]", Fail, Some("plugin.crashed"))]),
    );
}

#[test]
fn never_answers_a_method() {
    let r = run(host_fixture("never-answers-a-method"));
    assert_broken(
        &r,
        &with_gaps(&[("methods.answers[hang.forever]", Fail, Some("plugin.killed"))]),
    );
    assert_eq!(
        r.case("methods.answers[status.get]").status,
        Pass,
        "a new session after the kill"
    );
}

#[test]
fn child_spawning() {
    let r = run(host_fixture("child-spawning"));
    assert_broken(
        &r,
        &with_gaps(&[("lifecycle.no_orphans", Fail, Some("plugin.exited"))]),
    );
}

#[test]
fn exits_at_once() {
    let r = run(host_fixture("exits-at-once"));
    assert_broken(&r, &[("launch.starts", Fail, Some("plugin.crashed"))]);
    let d = &r.case("launch.starts").detail;
    assert!(
        d.contains("exits at once (exit code 1)")
            && d.contains("cannot start: missing configuration"),
        "{d}"
    );
}

#[test]
fn not_executable() {
    let r = run(host_fixture("not-executable"));
    assert_broken(&r, &[("launch.command_exists", Fail, None)]);
    assert!(r
        .case("launch.command_exists")
        .detail
        .contains("not executable"));
    assert_eq!(r.case("launch.starts").status, Skip);
}

#[test]
fn missing_command() {
    let r = run(host_fixture("missing-command"));
    assert_broken(&r, &[("launch.command_exists", Fail, None)]);
    assert!(r.case("launch.command_exists").detail.contains("not found"));
}

#[test]
fn methods_drift() {
    let r = run(host_fixture("methods-drift"));
    assert_broken(
        &r,
        &with_gaps(&[
            ("handshake.methods_within_manifest", Warn, None),
            ("handshake.methods_complete", Warn, None),
        ]),
    );
    assert_eq!(r.case("methods.answers[missing.thing]").status, Skip);
}

#[test]
fn invalid_manifest_is_a_failed_case_not_a_crash() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("kaged-plugin.yaml"),
        "name: Not_Valid\nversion: one\n",
    )
    .expect("write");
    let r = run(dir.path().to_path_buf());
    assert_broken(&r, &[("manifest.valid", Fail, None)]);
    assert!(r
        .cases
        .iter()
        .filter(|c| c.id != "manifest.valid")
        .all(|c| c.status == Skip));
    assert_eq!(r.exit_code(false), 1);
}
