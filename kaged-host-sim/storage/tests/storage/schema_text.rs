//! Schema text is storage too (issue 45): `CREATE VIEW` / `CREATE TRIGGER`
//! statements carrying 1 MB of SQL each went past a 1 MiB quota by tens of
//! MiB. Now one statement's text is capped (`MAX_STATEMENT_BYTES`,
//! `-32602`), a plugin's schema text counts against its quota (`-32003`,
//! reason `quota`) and is capped by itself (`MAX_SCHEMA_BYTES`, `-32003`,
//! reason `quota`), and `DROP` always runs.

use crate::support::storage::*;
use crate::support::storage::{refusal, usage, QUOTA};
use kaged_host_storage::StorageBroker;
use kaged_host_storage::{MAX_SCHEMA_BYTES, MAX_STATEMENT_BYTES};
use serde_json::json;

/// The file and its write-ahead log.
fn size(b: &StorageBroker) -> u64 {
    let wal = b.path().with_extension("sqlite3-wal");
    std::fs::metadata(b.path()).expect("file").len()
        + std::fs::metadata(wal).map(|m| m.len()).unwrap_or(0)
}

/// `CREATE VIEW name` whose text is about `len` bytes.
fn view(name: &str, len: usize) -> String {
    format!("CREATE VIEW {name} AS SELECT '{}' AS a", "v".repeat(len))
}

#[test]
fn a_statement_past_the_text_cap_is_refused_before_it_runs() {
    let b = broker();
    let w = writer("big");
    ok(exec(&b, &w, "CREATE TABLE t (a)", json!([])));
    let (start, objects) = (size(&b), master(&b));
    // The probe: a view and a trigger of 1 MB of SQL each.
    let mb = 1 << 20;
    let trigger = format!(
        "CREATE TRIGGER g AFTER INSERT ON t BEGIN SELECT '{}'; END",
        "g".repeat(mb)
    );
    for sql in [view("v", mb), trigger] {
        let d = exec(&b, &w, &sql, json!([])).expect_err("too long");
        assert_eq!(d.error.code, INVALID, "{d}");
        assert!(
            d.error.message.starts_with(&format!(
                "statement too long ({} bytes, at most {MAX_STATEMENT_BYTES})",
                sql.len()
            )),
            "{}",
            d.error.message
        );
        // A query too: the cap is on the text, whatever it asks.
        let q = format!("SELECT '{}' AS a", "q".repeat(mb));
        assert_eq!(code(query(&b, &w, &q, json!([]))), INVALID);
    }
    assert_eq!(master(&b), objects, "nothing was created");
    assert!(size(&b) <= start, "{start} → {}", size(&b));
    // Just under the cap is a statement like any other.
    ok(exec(
        &b,
        &w,
        &view("v", MAX_STATEMENT_BYTES - 64),
        json!([]),
    ));
}

#[test]
fn views_and_triggers_count_against_the_quota() {
    let b = broker().with_quota(QUOTA);
    let w = writer("views");
    ok(exec(&b, &w, "CREATE TABLE t (a)", json!([])));
    let start = size(&b);
    // 25 KB views: the quota (64 KiB, 16 pages) holds two with the table
    // (its page and 13 pages of text), not three (20 pages).
    let mut made = 0;
    let refused = loop {
        match exec(&b, &w, &view(&format!("v{made}"), 25_000), json!([])) {
            Ok(_) => made += 1,
            Err(d) => break d,
        }
        assert!(made < 10, "ten 25 KB views in a 64 KiB quota");
    };
    assert_eq!(made, 2);
    assert_eq!(refused.error.code, DENIED, "{refused}");
    assert_eq!(refused.reason, "quota");
    assert!(refused.is_access_denial());
    let used = usage(b.path(), "views");
    assert!(used <= QUOTA, "{used}");
    assert_eq!(refused.error.message, refusal("views", used));
    // A trigger's text is counted the same way.
    let trigger = format!(
        "CREATE TRIGGER g AFTER INSERT ON t BEGIN SELECT '{}'; END",
        "g".repeat(20_000)
    );
    assert_eq!(code(exec(&b, &w, &trigger, json!([]))), DENIED);
    // The file grew by the two views, never past the quota and the slack.
    assert!(
        size(&b) < start + QUOTA + (2 << 20),
        "{start} → {}",
        size(&b)
    );
    // Dropping makes room.
    ok(exec(&b, &w, "DROP VIEW v0", json!([])));
    ok(exec(&b, &w, &trigger, json!([])));
}

#[test]
fn a_plugins_schema_text_is_capped_below_any_quota() {
    // The default quota (64 MiB) would take a thousand 60 KB views.
    let b = broker();
    let w = writer("schema");
    let each = 60_000;
    let fits = usize::try_from(MAX_SCHEMA_BYTES).expect("small") / (each + 64);
    for i in 0..fits {
        ok(exec(&b, &w, &view(&format!("v{i}"), each), json!([])));
    }
    let d = exec(&b, &w, &view("last", each), json!([])).expect_err("past the cap");
    assert_eq!(d.error.code, DENIED, "{d}");
    assert_eq!(d.reason, "quota");
    assert!(
        d.error.message.starts_with(&format!(
            "storage schema text limit of {MAX_SCHEMA_BYTES} bytes exceeded for plugin schema: its tables, indexes, views and triggers hold "
        )),
        "{}",
        d.error.message
    );
    // Another plugin's schema is its own; a drop makes room.
    ok(exec(&b, &writer("other"), &view("v", each), json!([])));
    ok(exec(&b, &w, "DROP VIEW v0", json!([])));
    ok(exec(&b, &w, &view("last", each), json!([])));
}
