//! The quota as a plugin on the SDK meets it: `-32003` through the
//! storage client, the operator's audit, and the plugin cleaning up.

use std::sync::Arc;

use super::sdk::{call, client, connect};
use crate::support::host::{one, EASY};
use crate::support::storage::{refusal, usage, QUOTA};
use kaged_host_core::{AuditLog, HostConfig, HostSim, TimeScale};
use kaged_host_storage::{BrokerHandler, StorageBroker};
use serde_json::json;

#[tokio::test]
async fn a_plugin_past_its_quota_gets_minus_32003_and_the_operator_an_audit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = AuditLog::memory();
    let db = dir.path().join("kaged.sqlite3");
    let broker = StorageBroker::open(&db).expect("broker").with_quota(QUOTA);
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(TimeScale::new(EASY).expect("scale"))
            .with_audit(audit.clone())
            .with_storage(Arc::new(BrokerHandler::new(broker))),
    );
    let rw = ["kaged:storage:read", "kaged:storage:write"];
    let s = connect(&host, client("quota-hog", &rw).build().expect("plugin")).await;
    let exec = |sql: &str| json!({ "sql": sql });
    call(&s, "db.exec", exec("CREATE TABLE blobs (b BLOB)")).await;
    let ok = call(
        &s,
        "db.exec",
        exec("INSERT INTO blobs VALUES (zeroblob(30000))"),
    )
    .await;
    assert_eq!(ok, json!({"rows_affected": 1}));
    let refused = call(
        &s,
        "db.exec",
        exec("INSERT INTO blobs VALUES (zeroblob(40000))"),
    )
    .await;
    assert_eq!(
        (&refused["variant"], &refused["code"]),
        (&json!("Denied"), &json!(-32003)),
        "{refused}"
    );
    assert_eq!(
        refused["message"],
        refusal("quota-hog", usage(&db, "quota-hog"))
    );
    let audited = one(&audit, "plugin.storage_denied");
    assert_eq!(audited.data["reason"], "quota");
    assert_eq!(audited.data["method"], "kaged.storage.exec");
    assert_eq!(
        audited.data["sql"],
        "INSERT INTO blobs VALUES (zeroblob(?))"
    );
    let count = call(
        &s,
        "db.raw",
        json!({"sql": "SELECT count(*) AS n FROM blobs"}),
    )
    .await;
    assert_eq!(count["rows"], json!([{"n": 1}]));
    let deleted = call(&s, "db.exec", exec("DELETE FROM blobs")).await;
    assert_eq!(deleted, json!({"rows_affected": 1}));
}
