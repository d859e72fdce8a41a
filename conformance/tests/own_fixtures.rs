//! The suite's own broken fixtures (`tests/fixtures/plugins/`, on
//! `_lib/cproto.py`): each breaks exactly one rule, and the suite reports
//! exactly that case with its audit event. One test per fixture, so that
//! they run in parallel.

mod common;

use common::{assert_broken, own_fixture, run};
use kaged_conformance::report::Status::{Fail, Warn};

macro_rules! breaks_one_rule {
    ($($test:ident: $fixture:literal => ($id:literal, $status:ident, $event:expr);)*) => {$(
        #[test]
        fn $test() {
            let r = run(own_fixture($fixture));
            assert_eq!(r.plugin.name, $fixture);
            assert_broken(&r, &[($id, $status, $event)]);
        }
    )*};
}

breaks_one_rule! {
    ignores_batch: "ignores-batch" => ("protocol.batch_rejected", Fail, None);
    wrong_ids: "wrong-ids" => ("protocol.ids_echoed", Fail, Some("plugin.protocol_violation"));
    lax_tool: "lax-tool" => ("methods.tool_invalid_args[lax-tool.shout]", Fail, Some("plugin.method_returned"));
    ignores_eof: "ignores-eof" => ("lifecycle.stdin_eof_exits", Fail, Some("plugin.killed"));
    stderr_jsonrpc: "stderr-jsonrpc" => ("protocol.no_jsonrpc_on_stderr", Fail, None);
    undeclared_notifier: "undeclared-notifier" => ("notifications.declared_only", Warn, Some("plugin.notification"));
    rejects_config: "rejects-config" => ("config.update_accepted", Warn, Some("plugin.method_returned"));
    hook_hangs: "hook-hangs" => ("hooks.answers[on_session_start]", Fail, Some("plugin.hook.timeout"));
    storage_snooper: "storage-snooper" => ("storage.no_denials", Fail, Some("plugin.storage_denied"));
}

#[test]
fn bad_compactor_emits_the_fallback_chain_in_order() {
    let r = run(own_fixture("bad-compactor"));
    assert_broken(
        &r,
        &[(
            "compaction.compactor_contract",
            Fail,
            Some("compaction.failed"),
        )],
    );
    let c = r.case("compaction.compactor_contract");
    let i = c
        .audit_events
        .iter()
        .position(|e| e == "compaction.failed")
        .expect("failed");
    assert_eq!(
        c.audit_events.get(i + 1).map(String::as_str),
        Some("compaction.completed")
    );
    assert!(
        c.detail.contains("always-keep message `msg_002`"),
        "{}",
        c.detail
    );
}
