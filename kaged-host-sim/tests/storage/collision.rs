//! Plugins whose names look alike (`alpha` / `alpha-x`, `foo` / `foo-bar`,
//! `a-` / `a--b`): under the spec's prefix (`-` as `_`) `alpha`'s table
//! `x_t` and `alpha-x`'s table `t` were one physical table. The prefix now
//! keeps the `-` and is injective, so neither can name the other's objects
//! and no answer depends on whether the other's objects exist: every probe
//! gets the same code and message in a world where the other plugin has
//! tables, rows, an index, a view and a trigger as in one where it has none.

use crate::support::storage::*;
use kaged_host_storage::StorageBroker;
use kaged_host_storage::{rewrite, storage_prefix, StorageClient};
use proptest::prelude::*;
use serde_json::{json, Value};

/// What a call answered: the result, or the error's code and message.
type Answer = Result<Value, (i64, String)>;

fn answer(r: Result<Value, kaged_host_storage::StorageDenial>) -> Answer {
    r.map_err(|d| (d.error.code, d.error.message.clone()))
}

/// Give `owner` a table `t` (and `secret`) with rows, an index, a view and
/// a trigger.
fn seed(b: &StorageBroker, owner: &StorageClient) {
    for sql in [
        "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT UNIQUE)",
        "CREATE TABLE secret (s TEXT)",
        "CREATE INDEX t_a ON t (a)",
        "CREATE VIEW v AS SELECT a FROM t",
        "CREATE TRIGGER t_log AFTER INSERT ON t BEGIN INSERT INTO secret VALUES (new.a); END",
        "INSERT INTO t (id, a) VALUES (1, 'other-secret')",
    ] {
        ok(exec(b, owner, sql, json!([])));
    }
}

/// Every probe a plugin can make at the name `n` (what the other plugin's
/// `t` used to be for it), and at the catalogue.
fn probes(n: &str) -> Vec<String> {
    [
        "SELECT * FROM {n}",
        "SELECT count(*) FROM {n}",
        "SELECT * FROM \"{n}\"",
        "INSERT INTO {n} (id, a) VALUES (2, 'x')",
        "INSERT INTO {n} (id, a) VALUES (1, 'other-secret')",
        "UPDATE {n} SET a = 'y'",
        "DELETE FROM {n}",
        "ALTER TABLE {n} RENAME TO mine",
        "ALTER TABLE {n} ADD COLUMN z",
        "CREATE INDEX probe_i ON {n} (a)",
        "CREATE VIEW probe_v AS SELECT * FROM {n}",
        "CREATE TRIGGER probe_tr AFTER INSERT ON {n} BEGIN SELECT 1; END",
        "DROP INDEX {n}_a",
        "DROP VIEW v",
        "DROP TRIGGER {n}_log",
        "CREATE TABLE fk (id INTEGER REFERENCES {n} (id))",
        "INSERT INTO fk VALUES (1)",
        "SELECT * FROM sqlite_master",
        "SELECT name FROM pragma_table_list",
        "PRAGMA table_info({n})",
        "SELECT * FROM \"plugin_alpha-x_t\"",
        "SELECT * FROM plugin_alpha_x_t",
        "CREATE TABLE IF NOT EXISTS {n} (a)",
        "CREATE TABLE {n} (id INTEGER PRIMARY KEY, a TEXT UNIQUE)",
        "INSERT INTO {n} (id, a) VALUES (1, 'mine')",
        "SELECT * FROM {n}",
        "DROP TABLE {n}",
    ]
    .iter()
    .map(|p| p.replace("{n}", n))
    .collect()
}

/// The answers `prober` gets to [`probes`] at `name`, in a world where
/// `other` was seeded or not.
fn world(prober: &str, name: &str, other: &str, seeded: bool) -> Vec<(String, Answer)> {
    let b = broker();
    if seeded {
        seed(&b, &writer(other));
    }
    let p = writer(prober);
    let mut out: Vec<(String, Answer)> = probes(name)
        .into_iter()
        .map(|sql| {
            let a = if sql.starts_with("SELECT") {
                answer(query(&b, &p, &sql, json!([])))
            } else {
                answer(exec(&b, &p, &sql, json!([])))
            };
            (sql, a)
        })
        .collect();
    out.push(("schema".into(), Ok(json!(schema(&b, &p)))));
    if seeded {
        // And the other plugin's data is intact.
        let v = ok(query(&b, &writer(other), "SELECT a FROM t", json!([])));
        assert_eq!(
            v["rows"],
            json!([{"a": "other-secret"}]),
            "{prober} vs {other}"
        );
    }
    out
}

#[track_caller]
fn same_answers(prober: &str, name: &str, other: &str) {
    let with = world(prober, name, other, true);
    let without = world(prober, name, other, false);
    for ((sql, a), (_, b)) in with.iter().zip(&without) {
        assert_eq!(
            a, b,
            "{prober} probing {name} ({other} seeded or not): {sql}"
        );
    }
    // Sanity: the probes did reach the plugin's own (missing) table.
    assert!(
        with.iter().any(|(_, a)| matches!(a,
            Err((code, m)) if *code == INVALID && m == &format!("no such table: {name}"))),
        "{with:?}"
    );
}

#[test]
fn alpha_cannot_tell_whether_alpha_x_has_tables() {
    same_answers("alpha", "x_t", "alpha-x");
}

#[test]
fn alpha_x_cannot_tell_whether_alpha_has_the_table_that_used_to_collide() {
    // `alpha`'s `x_t` was `alpha-x`'s `t`: seed `alpha` with it.
    let probe = |seeded: bool| {
        let b = broker();
        let alpha = writer("alpha");
        if seeded {
            ok(exec(
                &b,
                &alpha,
                "CREATE TABLE x_t (id INTEGER PRIMARY KEY, a TEXT UNIQUE)",
                json!([]),
            ));
            ok(exec(
                &b,
                &alpha,
                "INSERT INTO x_t VALUES (1, 'other-secret')",
                json!([]),
            ));
        }
        let p = writer("alpha-x");
        let mut out = Vec::new();
        for sql in probes("t") {
            let a = if sql.starts_with("SELECT") {
                answer(query(&b, &p, &sql, json!([])))
            } else {
                answer(exec(&b, &p, &sql, json!([])))
            };
            out.push((sql, a));
        }
        if seeded {
            let v = ok(query(&b, &alpha, "SELECT a FROM x_t", json!([])));
            assert_eq!(v["rows"], json!([{"a": "other-secret"}]));
        }
        out
    };
    assert_eq!(probe(true), probe(false));
}

#[test]
fn every_collision_shape_of_the_old_prefix_is_two_tables_now() {
    // (plugin, its table) pairs that were one physical table under `-` as `_`.
    for [(p1, t1), (p2, t2)] in [
        [("foo", "bar_x"), ("foo-bar", "x")],
        [("a", "b_c_d"), ("a-b-c", "d")],
        [("a-b", "c_d"), ("a", "b_c_d")],
        [("a-", "x"), ("a", "_x")],
        [("a--b", "x"), ("a-", "b_x")],
    ] {
        let b = broker();
        let (c1, c2) = (writer(p1), writer(p2));
        ok(exec(
            &b,
            &c1,
            &format!("CREATE TABLE \"{t1}\" (v)"),
            json!([]),
        ));
        ok(exec(
            &b,
            &c1,
            &format!("INSERT INTO \"{t1}\" VALUES ('{p1}')"),
            json!([]),
        ));
        ok(exec(
            &b,
            &c2,
            &format!("CREATE TABLE \"{t2}\" (v)"),
            json!([]),
        ));
        ok(exec(
            &b,
            &c2,
            &format!("INSERT INTO \"{t2}\" VALUES ('{p2}')"),
            json!([]),
        ));
        for (c, t, p) in [(&c1, t1, p1), (&c2, t2, p2)] {
            let v = ok(query(&b, c, &format!("SELECT v FROM \"{t}\""), json!([])));
            assert_eq!(v["rows"], json!([{"v": p}]), "{p}'s {t}");
            assert_eq!(schema(&b, c), vec![t.to_string()], "{p}");
        }
        b.uninstall(p1).expect("uninstall");
        let v = ok(query(
            &b,
            &c2,
            &format!("SELECT v FROM \"{t2}\""),
            json!([]),
        ));
        assert_eq!(
            v["rows"],
            json!([{"v": p2}]),
            "{p2} survives {p1}'s uninstall"
        );
    }
}

#[test]
fn a_registry_entry_of_another_plugin_is_denied_without_naming_it() {
    // Only a registry out of step with the names (a legacy object) can
    // register a name under one plugin's prefix to another: the answer is
    // a denial that names no owner, and the audit has the truth.
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("db.sqlite3");
    {
        let b = StorageBroker::open(&path).expect("open");
        ok(exec(
            &b,
            &writer("foo"),
            "CREATE TABLE taken (a)",
            json!([]),
        ));
    }
    let raw = rusqlite::Connection::open(&path).expect("raw");
    raw.execute(
        "UPDATE kaged_storage_owners SET plugin = 'zed' WHERE name = 'plugin_foo_taken'",
        [],
    )
    .expect("re-register");
    let b = StorageBroker::open(&path).expect("reopen");
    let foo = writer("foo");
    let theirs = exec(&b, &foo, "SELECT * FROM Taken", json!([])).expect_err("refused");
    let missing = exec(&b, &foo, "SELECT * FROM Absent", json!([])).expect_err("missing");
    // A denial, -32003 on every path (ADDENDUM §16), naming no owner; a
    // missing table of its own stays SQLite's -32602.
    assert_eq!(theirs.error.code, -32003);
    assert_eq!(
        theirs.error.message,
        "storage access denied: `Taken` is not one of this plugin's tables"
    );
    assert!(!theirs.error.message.contains("zed"));
    assert_eq!(missing.error.code, INVALID);
    assert_eq!(missing.error.message, "no such table: Absent");
    assert!(theirs.is_access_denial() && !missing.is_access_denial());
    assert_eq!(
        theirs.reason,
        "`plugin_foo_taken` is registered to plugin zed"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Two (plugin, table) pairs name the same physical object, ASCII case
    /// folded as SQLite does, only when they are the same pair; the
    /// rewriter's object names agree.
    #[test]
    fn prefixed_names_are_injective(
        p1 in "[ab][ab-]{0,3}", t1 in "[ab_-]{1,4}",
        p2 in "[ab][ab-]{0,3}", t2 in "[ab_-]{1,4}",
    ) {
        let n1 = format!("{}{t1}", storage_prefix(&p1)).to_ascii_lowercase();
        let n2 = format!("{}{t2}", storage_prefix(&p2)).to_ascii_lowercase();
        prop_assert_eq!(n1 == n2, p1 == p2 && t1 == t2);
        let o1 = rewrite(&storage_prefix(&p1), &format!("SELECT * FROM \"{t1}\"")).expect("rewrite").objects;
        let o2 = rewrite(&storage_prefix(&p2), &format!("SELECT * FROM \"{t2}\"")).expect("rewrite").objects;
        prop_assert_eq!(o1 == o2, p1 == p2 && t1 == t2);
        prop_assert_eq!(o1, vec![n1]);
    }
}
