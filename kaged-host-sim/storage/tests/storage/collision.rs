//! Plugins whose names look alike (`alpha` / `alpha-x`, `foo` / `foo-bar`,
//! `a-` / `a--b`) under the spec's prefix (`-` as `_`, ADDENDUM §16):
//! `alpha`'s table `x_t` and `alpha-x`'s table `t` are one physical name.
//! The owner registry gives it to whoever created it first; the other
//! plugin is refused it (`-32003`, naming neither the owner nor the
//! physical name) and never reads, writes or drops a row of it. Every name
//! that does not collide gets the same answer whether the other plugin has
//! objects or not.

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
        "SELECT * FROM plugin_alpha_t",
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
fn alpha_cannot_tell_whether_alpha_x_has_tables_it_does_not_share() {
    same_answers("alpha", "t", "alpha-x");
    same_answers("alpha", "secret", "alpha-x");
    same_answers("alpha-x", "t", "alpha");
}

/// The answers to [`probes`] at a name another plugin's object shares:
/// the same as where the other has nothing, or the registry's refusal
/// (`-32003`, the name as written, nothing of the owner); never a row.
#[track_caller]
fn shared_name_refused(prober: &str, name: &str, other: &str) {
    let with = world(prober, name, other, true);
    let without = world(prober, name, other, false);
    let mut refused = 0;
    for ((sql, a), (_, b)) in with.iter().zip(&without) {
        if a == b {
            continue;
        }
        refused += 1;
        // The refusal names what the plugin wrote (the table, or its index
        // `NAME_a`), nothing else.
        let written = |m: &str| {
            m.strip_prefix("storage access denied: `")
                .and_then(|m| m.strip_suffix("` is not one of this plugin's tables"))
                .is_some_and(|w| w.starts_with(name) && sql.contains(w))
        };
        // Or the plugin's own table `fk` is missing, because its `CREATE`
        // (referencing the shared name) was the refused probe before.
        // The same for the plugin's schema: what the refused probes would
        // have created is missing, and nothing else is there.
        let subset = |a: &Answer, b: &Answer| match (a, b) {
            (Ok(Value::Array(x)), Ok(Value::Array(y))) => x.iter().all(|t| y.contains(t)),
            _ => false,
        };
        let cascade = (sql.starts_with("INSERT INTO fk")
            && a == &Err((INVALID, "no such table: fk".to_string())))
            || (sql == "schema" && subset(a, b));
        assert!(
            cascade || matches!(a, Err((DENIED, m)) if written(m)),
            "{prober} probing {name} ({other} seeded): {sql} answered {a:?}"
        );
    }
    assert!(refused > 0, "the seeded name was shared: {with:?}");
    for (sql, a) in &with {
        let text = format!("{a:?}");
        assert!(
            !text.contains("other-secret"),
            "{prober} probing {name}: {sql} answered {text}"
        );
    }
}

#[test]
fn a_name_shared_with_another_plugins_object_is_refused_naming_nothing_of_it() {
    // `alpha`'s `x_t` is `alpha-x`'s `t`, and the other way round.
    shared_name_refused("alpha", "x_t", "alpha-x");
    shared_name_refused("foo", "bar_t", "foo-bar");
}

#[test]
fn alpha_x_is_refused_the_table_alpha_created_first() {
    let b = broker();
    let alpha = writer("alpha");
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
    let p = writer("alpha-x");
    for sql in probes("t") {
        let a = if sql.starts_with("SELECT") {
            answer(query(&b, &p, &sql, json!([])))
        } else {
            answer(exec(&b, &p, &sql, json!([])))
        };
        let text = format!("{a:?}");
        assert!(!text.contains("other-secret"), "{sql}: {text}");
    }
    let v = ok(query(&b, &alpha, "SELECT a FROM x_t", json!([])));
    assert_eq!(v["rows"], json!([{"a": "other-secret"}]));
    assert_eq!(schema(&b, &alpha), vec!["x_t"]);
    assert!(schema(&b, &p).is_empty());
}

#[test]
fn every_collision_shape_is_held_by_whoever_created_it_first() {
    // (plugin, its table) pairs that are one physical table, `-` as `_`.
    for [(p1, t1), (p2, t2)] in [
        [("foo", "bar_x"), ("foo-bar", "x")],
        [("a", "b_c_d"), ("a-b-c", "d")],
        [("a-b", "c_d"), ("a", "b_c_d")],
        [("a-", "x"), ("a", "_x")],
        [("a--b", "x"), ("a-", "b_x")],
    ] {
        let b = broker();
        let (c1, c2) = (writer(p1), writer(p2));
        let create = |t: &str| format!("CREATE TABLE \"{t}\" (v)");
        ok(exec(&b, &c1, &create(t1), json!([])));
        ok(exec(
            &b,
            &c1,
            &format!("INSERT INTO \"{t1}\" VALUES ('{p1}')"),
            json!([]),
        ));
        let refused = exec(&b, &c2, &create(t2), json!([])).expect_err("taken");
        assert_eq!(refused.error.code, DENIED, "{p2}'s {t2}");
        assert_eq!(
            refused.error.message,
            format!("storage access denied: `{t2}` is not one of this plugin's tables")
        );
        assert!(schema(&b, &c2).is_empty(), "{p2}");
        let v = ok(query(
            &b,
            &c1,
            &format!("SELECT v FROM \"{t1}\""),
            json!([]),
        ));
        assert_eq!(v["rows"], json!([{"v": p1}]), "{p1}'s {t1}");
        // Uninstalling the holder frees the name.
        b.uninstall(p1).expect("uninstall");
        ok(exec(&b, &c2, &create(t2), json!([])));
        ok(exec(
            &b,
            &c2,
            &format!("INSERT INTO \"{t2}\" VALUES ('{p2}')"),
            json!([]),
        ));
        let v = ok(query(
            &b,
            &c2,
            &format!("SELECT v FROM \"{t2}\""),
            json!([]),
        ));
        assert_eq!(v["rows"], json!([{"v": p2}]), "{p2}'s {t2}");
        assert_eq!(
            b.owner_of(&format!("{}{t2}", storage_prefix(p2)))
                .as_deref(),
            Some(p2)
        );
    }
}

#[test]
fn a_registry_entry_of_another_plugin_is_denied_without_naming_it() {
    // A name under `foo`'s prefix registered to another plugin: the
    // answer is a denial that names no owner, and the audit has the truth.
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
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Two plugins name one physical object exactly when the spec's
    /// prefix says so (the rewriter agrees), and then only the first to
    /// create it holds it: the second is refused, `-32003`, and each only
    /// ever reads its own rows.
    #[test]
    fn a_shared_physical_name_has_one_holder(
        p1 in "[ab][ab-]{0,3}", t1 in "[ab_]{1,4}",
        p2 in "[ab][ab-]{0,3}", t2 in "[ab_]{1,4}",
    ) {
        prop_assume!(p1 != p2);
        let n1 = format!("{}{t1}", storage_prefix(&p1)).to_ascii_lowercase();
        let n2 = format!("{}{t2}", storage_prefix(&p2)).to_ascii_lowercase();
        let o1 = rewrite(&storage_prefix(&p1), &format!("SELECT * FROM \"{t1}\"")).expect("rewrite").objects;
        prop_assert_eq!(o1, vec![n1.clone()]);
        let b = broker();
        let (c1, c2) = (writer(&p1), writer(&p2));
        ok(exec(&b, &c1, &format!("CREATE TABLE \"{t1}\" (v)"), json!([])));
        ok(exec(&b, &c1, &format!("INSERT INTO \"{t1}\" VALUES ('{p1}')"), json!([])));
        let second = answer(exec(&b, &c2, &format!("CREATE TABLE \"{t2}\" (v)"), json!([])));
        if n1 == n2 {
            prop_assert_eq!(second.map_err(|(c, _)| c), Err(DENIED));
        } else {
            prop_assert!(second.is_ok(), "{:?}", second);
            ok(exec(&b, &c2, &format!("INSERT INTO \"{t2}\" VALUES ('{p2}')"), json!([])));
            let v = ok(query(&b, &c2, &format!("SELECT v FROM \"{t2}\""), json!([])));
            prop_assert_eq!(&v["rows"], &json!([{"v": p2}]));
        }
        let v = ok(query(&b, &c1, &format!("SELECT v FROM \"{t1}\""), json!([])));
        prop_assert_eq!(&v["rows"], &json!([{"v": p1}]));
    }
}
