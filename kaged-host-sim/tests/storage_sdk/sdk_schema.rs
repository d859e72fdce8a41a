//! The SDK's schema migrations (`Migrations`, run once per store at
//! `initialized`, before any handler) and a storage denial propagated with
//! `?` (it reaches the caller as -32003, one message), through the whole
//! host against the real broker.

use std::path::Path;
use std::sync::Arc;

use crate::support::host::EASY;
use kaged_host_core::testing::gated::GatedHandler;
use kaged_host_core::{HostConfig, HostSim, PluginHandle, TimeScale};
use kaged_host_sim::ConnectPlugin;
use kaged_host_storage::{BrokerHandler, StorageBroker};
use kaged_plugin_sdk::{sql_params, Call, Migrations, Plugin, PluginError};
use serde_json::{json, Value};

const STEPS: [&str; 2] = [
    "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)",
    "CREATE INDEX notes_text ON notes (text)",
];

fn notes(steps: &[&str]) -> Plugin {
    Plugin::builder("notes")
        .version("1.0.0")
        .description("migrations test")
        .command(["./in-process"])
        .capability_used("kaged:storage:read")
        .capability_used("kaged:storage:write")
        .migrations(Migrations::new(steps))
        .method("notes.add", |p: Value, c: Call| async move {
            let text = p["text"].as_str().unwrap_or_default().to_owned();
            let done = c
                .host
                .storage()
                .exec("INSERT INTO notes (text) VALUES (?)", sql_params![text])
                .await?;
            Ok::<_, PluginError>(done.rows_affected)
        })
        .method("notes.version", |_: Value, c: Call| async move {
            let rows = c
                .host
                .storage()
                .query("SELECT version FROM kaged_schema_version", sql_params![])
                .await?;
            Ok::<_, PluginError>(json!(rows.rows))
        })
        .method("notes.peek", |_: Value, c: Call| async move {
            // Propagated with `?`: a denial must keep its code.
            c.host
                .storage()
                .query("SELECT name FROM sqlite_master", sql_params![])
                .await?;
            Ok::<_, PluginError>(json!("unreachable"))
        })
        .build()
        .expect("plugin")
}

fn host_over(db: &Path) -> HostSim {
    let broker = StorageBroker::open(db).expect("broker");
    HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(EASY).expect("scale"))
            .with_storage(Arc::new(BrokerHandler::new(broker))),
    )
}

async fn start(db: &Path, steps: &[&str]) -> PluginHandle {
    host_over(db)
        .connect_plugin(notes(steps))
        .await
        .expect("handshake")
}

#[tokio::test]
async fn migrations_run_once_per_store_before_the_first_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("kaged.sqlite3");
    // The first call arrives right after the handshake: it waits for the
    // table the migrations create instead of failing on its absence.
    let s = start(&db, &STEPS).await;
    let added = s.call("notes.add", Some(json!({"text": "a"})), None).await;
    assert_eq!(added.expect("the table exists"), json!(1));
    assert_eq!(
        s.call("notes.version", None, None).await.expect("version"),
        json!([{"version": 2}])
    );
    s.shutdown().await;

    // Started again on the same store, with a step more: only the new one
    // runs (a rerun of step 1 would fail: its CREATE TABLE has no IF NOT
    // EXISTS), and the data is still there.
    let more = [STEPS[0], STEPS[1], "ALTER TABLE notes ADD COLUMN tag TEXT"];
    let s = start(&db, &more).await;
    assert_eq!(
        s.call("notes.add", Some(json!({"text": "b"})), None)
            .await
            .expect("add"),
        json!(1)
    );
    assert_eq!(
        s.call("notes.version", None, None).await.expect("version"),
        json!([{"version": 3}])
    );
    s.shutdown().await;
}

/// The race forced: the migrations' first storage request is held at the
/// host, a call arrives meanwhile, and it waits for the migrations (and
/// then succeeds) instead of running against a store without its table.
#[tokio::test]
async fn a_call_that_arrives_during_the_migrations_waits_for_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = StorageBroker::open(&dir.path().join("kaged.sqlite3")).expect("broker");
    let (handler, mut gate) = GatedHandler::new(Arc::new(BrokerHandler::new(broker)));
    let audit = kaged_host_core::audit::AuditLog::memory();
    let mut events = audit.subscribe();
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(EASY).expect("scale"))
            .with_audit(audit)
            .with_storage(Arc::new(handler)),
    );
    let s = Arc::new(host.connect_plugin(notes(&STEPS)).await.expect("handshake"));
    // The migrations started at `initialized`: their request is held.
    let first = gate
        .arrived()
        .await
        .expect("the migrations ask for storage");
    assert!(first.starts_with("kaged.storage."), "{first}");
    let call = tokio::spawn({
        let s = s.clone();
        async move { s.call("notes.add", Some(json!({"text": "a"})), None).await }
    });
    // The host sent the call; a ping round-trips after it on the same
    // ordered pipe (the plugin answers pings while its handlers wait).
    loop {
        let e = events.recv().await.expect("the host audits the call");
        if e.event == kaged_host_core::audit::AuditEvent::MethodCalled {
            break;
        }
    }
    s.ping()
        .await
        .expect("a ping is answered while the migrations wait");
    assert!(
        !call.is_finished(),
        "the call cannot finish before the migrations"
    );
    gate.open();
    let added = call.await.expect("task");
    assert_eq!(
        added.expect("the table exists once the call runs"),
        json!(1)
    );
    s.shutdown().await;
}

#[tokio::test]
async fn a_failed_step_answers_every_call_naming_the_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = start(
        &dir.path().join("kaged.sqlite3"),
        &[STEPS[0], "CREATE TABLE oops ("],
    )
    .await;
    let err = s
        .call("notes.add", Some(json!({"text": "a"})), None)
        .await
        .expect_err("the schema failed");
    let rpc = err.rpc_error();
    assert_eq!(rpc.code, -32000, "{rpc:?}");
    assert!(
        rpc.message.contains("schema migration step 2 of 2 failed"),
        "{}",
        rpc.message
    );
    s.shutdown().await;
}

#[tokio::test]
async fn a_denial_propagated_with_question_mark_stays_minus_32003_with_one_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = start(&dir.path().join("kaged.sqlite3"), &STEPS).await;
    let err = s.call("notes.peek", None, None).await.expect_err("denied");
    let rpc = err.rpc_error();
    assert_eq!(rpc.code, -32003, "{rpc:?}");
    assert_eq!(
        rpc.message.matches("storage access denied").count(),
        1,
        "one prefix: {}",
        rpc.message
    );
    s.shutdown().await;
}

#[test]
fn migrations_without_the_write_capability_do_not_build() {
    let err = Plugin::builder("notes")
        .version("1.0.0")
        .capability_used("kaged:storage:read")
        .migrations(Migrations::new(STEPS))
        .build()
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("kaged:storage:write"), "{err}");
}
