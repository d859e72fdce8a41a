//! Hostile SQL from an "attacker" plugin against a "victim" plugin's data:
//! every form is refused with the exact error code, nothing of the victim
//! ever appears in an answer, and the victim's objects and rows never
//! change. The authorizer is also tested on its own, with SQL that never
//! went through the rewriter.

use std::sync::Arc;

use crate::support::storage::*;
use kaged_host_storage::StorageBroker;
use kaged_host_storage::{install_authorizer, AuthPolicy, Owners, Phase};
use serde_json::json;

fn arena() -> (StorageBroker, kaged_host_storage::StorageClient, String) {
    let b = broker();
    seed_victim(&b);
    let a = writer("attacker");
    ok(exec(
        &b,
        &a,
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)",
        json!([]),
    ));
    ok(exec(&b, &a, "CREATE TABLE t2 (v TEXT)", json!([])));
    ok(exec(
        &b,
        &a,
        "INSERT INTO t (id, v) VALUES (1, 'mine')",
        json!([]),
    ));
    let fp = victim_fingerprint(&b);
    (b, a, fp)
}

const HOSTILE_QUERIES: &[&str] = &[
    "SELECT * FROM plugin_victim_secrets",
    "SELECT * FROM \"plugin_victim_secrets\"",
    "SELECT * FROM [plugin_victim_secrets]",
    "SELECT * FROM `plugin_victim_secrets`",
    "SELECT * FROM PLUGIN_VICTIM_SECRETS",
    "SELECT * FROM \"Plugin_Victim_Secrets\"",
    "SELECT * FROM plugin_victim_secret_view",
    "SELECT * FROM main.secrets",
    "SELECT * FROM main.plugin_victim_secrets",
    "SELECT * FROM \"main\".\"plugin_victim_secrets\"",
    "SELECT * FROM temp.t",
    "SELECT * FROM victim.secrets",
    "SELECT * FROM sqlite_master",
    "SELECT * FROM SQLITE_MASTER",
    "SELECT * FROM \"sqlite_schema\"",
    "SELECT * FROM [sqlite_temp_master]",
    "SELECT * FROM sqlite_sequence",
    "SELECT * FROM pragma_table_info('plugin_victim_secrets')",
    "SELECT * FROM PRAGMA_TABLE_LIST",
    "SELECT * FROM pragma_table_list()",
    "SELECT * FROM json_each('[1]')",
    "SELECT * FROM t, json_tree('{}')",
    "WITH plugin_victim_secrets AS (SELECT 1) SELECT * FROM plugin_victim_secrets",
    "WITH sqlite_master AS (SELECT 1) SELECT * FROM sqlite_master",
    "WITH x AS (SELECT * FROM plugin_victim_secrets) SELECT * FROM x",
    "WITH x AS (SELECT 1) SELECT * FROM x, (SELECT * FROM main.plugin_victim_secrets)",
    "SELECT * FROM t WHERE v IN (SELECT secret FROM plugin_victim_secrets)",
    "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM \"PLUGIN_victim_secrets\" WHERE secret LIKE 'T%')",
    "SELECT (SELECT secret FROM plugin_victim_secrets LIMIT 1)",
    "SELECT * FROM (SELECT * FROM (SELECT * FROM [plugin_victim_secrets]))",
    "SELECT * FROM t JOIN plugin_victim_secrets s ON 1",
    "SELECT * FROM t UNION SELECT * FROM plugin_victim_secrets",
    "SELECT main.plugin_victim_secrets.secret FROM t",
    "SELECT load_extension('/tmp/evil.so')",
    "SELECT LOAD_EXTENSION('/tmp/evil.so', 'entry')",
    "SELECT \"load_extension\"('x')",
    "SELECT readfile('/etc/passwd')",
    "SELECT writefile('/tmp/x', 'y')",
    "SELECT edit('x')",
    "SELECT fts3_tokenizer('simple')",
    "SELECT sqlite_version()",
    "SELECT sqlite_compileoption_get(0)",
    "SELECT main.lower('x')",
    "SELECT 1; SELECT * FROM plugin_victim_secrets",
    "SELECT 1; DROP TABLE t",
    "SELECT * FROM t;;SELECT 2",
    "PRAGMA table_info(plugin_victim_secrets)",
    "pragma writable_schema = 1",
    "ATTACH DATABASE 'evil.db' AS evil",
    "DETACH evil",
    "VACUUM",
    "VACUUM INTO '/tmp/copy.db'",
    "BEGIN",
    "BEGIN IMMEDIATE TRANSACTION",
    "COMMIT",
    "END",
    "ROLLBACK",
    "SAVEPOINT s1",
    "RELEASE s1",
    "REINDEX",
    "ANALYZE",
    "EXPLAIN SELECT * FROM plugin_victim_secrets",
    "EXPLAIN QUERY PLAN SELECT * FROM t",
];

const HOSTILE_EXECS: &[&str] = &[
    "INSERT INTO plugin_victim_secrets (id, secret) VALUES (2, 'x')",
    "INSERT INTO main.secrets (id, secret) VALUES (2, 'x')",
    "INSERT INTO t (v) SELECT secret FROM plugin_victim_secrets",
    "UPDATE [plugin_victim_secrets] SET secret = 'pwned'",
    "UPDATE t SET v = (SELECT secret FROM plugin_victim_secrets)",
    "UPDATE t SET v = s.secret FROM plugin_victim_secrets AS s",
    "DELETE FROM `plugin_victim_secrets`",
    "DELETE FROM t WHERE v IN (SELECT secret FROM Plugin_Victim_Secrets)",
    "WITH plugin_victim_secrets AS (SELECT 1) DELETE FROM plugin_victim_secrets",
    "REPLACE INTO sqlite_master VALUES ('table', 'x', 'x', 0, '')",
    "DROP TABLE plugin_victim_secrets",
    "DROP TABLE main.t",
    "DROP VIEW plugin_victim_secret_view",
    "DROP INDEX plugin_victim_secrets_by_secret",
    "DROP TRIGGER plugin_victim_on_secret",
    "DROP TABLE sqlite_sequence",
    "ALTER TABLE plugin_victim_secrets RENAME TO mine",
    "ALTER TABLE t RENAME TO plugin_victim_secrets2",
    "ALTER TABLE t RENAME TO main.x",
    "ALTER TABLE main.t ADD COLUMN x TEXT",
    "ALTER TABLE t ADD COLUMN x INTEGER REFERENCES plugin_victim_secrets (id)",
    "CREATE TABLE evil AS SELECT * FROM plugin_victim_secrets",
    "CREATE TABLE evil AS SELECT * FROM sqlite_master",
    "CREATE TABLE evil (id INTEGER REFERENCES plugin_victim_secrets (id))",
    "CREATE TABLE main.evil (a)",
    "CREATE TABLE temp.evil (a)",
    "CREATE TABLE plugin_victim_evil (a)",
    "CREATE TABLE sqlite_evil (a)",
    "CREATE TEMP TABLE evil (a)",
    "CREATE TEMPORARY TABLE evil (a)",
    "CREATE TEMP VIEW evil AS SELECT 1",
    "CREATE TEMP TRIGGER evil AFTER INSERT ON t BEGIN SELECT 1; END",
    "CREATE VIEW evil AS SELECT * FROM plugin_victim_secrets",
    "CREATE VIEW evil AS SELECT * FROM t WHERE v IN (SELECT secret FROM [plugin_victim_secrets])",
    "CREATE VIEW evil AS WITH plugin_victim_secrets AS (SELECT 1) SELECT * FROM plugin_victim_secrets",
    "CREATE VIEW evil AS SELECT * FROM pragma_table_list",
    "CREATE VIEW plugin_victim_evil AS SELECT 1",
    "CREATE INDEX evil ON plugin_victim_secrets (secret)",
    "CREATE INDEX plugin_victim_evil ON t (v)",
    "CREATE INDEX evil ON main.t (v)",
    "CREATE TRIGGER evil AFTER INSERT ON t BEGIN INSERT INTO plugin_victim_audit (n) VALUES (1); END",
    "CREATE TRIGGER evil AFTER INSERT ON t BEGIN UPDATE t2 SET v = (SELECT secret FROM plugin_victim_secrets); END",
    "CREATE TRIGGER evil AFTER INSERT ON t BEGIN DELETE FROM \"plugin_victim_secrets\"; END",
    "CREATE TRIGGER evil AFTER INSERT ON plugin_victim_secrets BEGIN INSERT INTO t2 VALUES (new.secret); END",
    "CREATE TRIGGER plugin_victim_evil AFTER INSERT ON t BEGIN SELECT 1; END",
    "CREATE TRIGGER evil AFTER INSERT ON t WHEN (SELECT count(*) FROM sqlite_master) > 0 BEGIN SELECT 1; END",
    "CREATE TRIGGER evil AFTER INSERT ON t BEGIN SELECT load_extension('x'); END",
    "CREATE VIRTUAL TABLE evil USING fts5(a)",
    "CREATE VIRTUAL TABLE evil USING fts3(a, tokenize=simple)",
    "INSERT INTO t (v) VALUES (load_extension('x'))",
    "INSERT INTO t (v) VALUES (1); DELETE FROM plugin_victim_secrets",
    "ATTACH 'file:evil.db' AS evil",
    "PRAGMA foreign_keys = ON",
    "BEGIN; DELETE FROM plugin_victim_secrets; COMMIT",
];

#[test]
fn hostile_queries_are_denied_with_32003() {
    let (b, a, fp) = arena();
    for sql in HOSTILE_QUERIES {
        let d = query(&b, &a, sql, json!([])).expect_err(sql);
        assert_eq!(d.error.code, DENIED, "{sql}: {d}");
        assert!(!d.error.message.contains(VICTIM_SECRET), "{sql}: {d}");
        assert!(d.redacted_sql.is_some(), "{sql}");
    }
    assert_eq!(victim_fingerprint(&b), fp);
}

#[test]
fn hostile_execs_are_denied_with_32003_and_change_nothing() {
    let (b, a, fp) = arena();
    let objects = master(&b);
    for sql in HOSTILE_EXECS.iter().chain(HOSTILE_QUERIES) {
        let d = exec(&b, &a, sql, json!([])).expect_err(sql);
        assert_eq!(d.error.code, DENIED, "{sql}: {d}");
        assert!(d.is_access_denial());
        assert!(!d.error.message.contains(VICTIM_SECRET), "{sql}: {d}");
    }
    assert_eq!(victim_fingerprint(&b), fp);
    assert_eq!(master(&b), objects, "no object was created or dropped");
    // The attacker's own data is intact and its connection still works.
    let v = ok(query(&b, &a, "SELECT v FROM t", json!([])));
    assert_eq!(v["rows"], json!([{"v": "mine"}]));
}

#[test]
fn attacker_views_and_triggers_only_ever_see_the_attacker() {
    let (b, a, fp) = arena();
    // Unqualified names in a view or trigger body are the attacker's own.
    ok(exec(
        &b,
        &a,
        "CREATE VIEW secrets AS SELECT v AS secret FROM t",
        json!([]),
    ));
    ok(exec(
        &b,
        &a,
        "CREATE TRIGGER copy AFTER INSERT ON t BEGIN INSERT INTO t2 (v) SELECT secret FROM secrets; END",
        json!([]),
    ));
    ok(exec(
        &b,
        &a,
        "INSERT INTO t (id, v) VALUES (2, 'also mine')",
        json!([]),
    ));
    let v = ok(query(&b, &a, "SELECT v FROM t2 ORDER BY v", json!([])));
    assert!(!leaks(&v), "{v}");
    assert_eq!(v["rows"], json!([{"v": "also mine"}, {"v": "mine"}]));
    let v = ok(query(&b, &a, "SELECT * FROM secrets", json!([])));
    assert!(!leaks(&v), "{v}");
    assert_eq!(schema(&b, &a), vec!["t", "t2"]);
    assert_eq!(victim_fingerprint(&b), fp);
}

// ---- The authorizer on its own -------------------------------------------

fn raw_conn(
    b: &StorageBroker,
    plugin: &str,
    owners: Arc<Owners>,
) -> (rusqlite::Connection, Arc<AuthPolicy>) {
    let prefix = kaged_host_storage::storage_prefix(plugin);
    let policy = Arc::new(AuthPolicy::new(plugin, &prefix, owners));
    let mut conn = rusqlite::Connection::open(b.path()).expect("raw open");
    install_authorizer(&mut conn, Arc::clone(&policy)).expect("install");
    (conn, policy)
}

#[track_caller]
fn auth_denied(conn: &rusqlite::Connection, sql: &str) {
    let err = conn.execute_batch(sql).expect_err(sql);
    assert_eq!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::AuthorizationForStatementDenied),
        "{sql}: {err}"
    );
}

/// A denied function is refused while the statement is prepared:
/// SQLITE_ERROR "not authorized to use function: NAME", not SQLITE_AUTH.
#[track_caller]
fn function_denied(conn: &rusqlite::Connection, sql: &str, function: &str) {
    let err = conn.execute_batch(sql).expect_err(sql);
    let expected = format!("not authorized to use function: {function}");
    assert!(err.to_string().starts_with(&expected), "{sql}: {err}");
}

#[test]
fn the_authorizer_denies_sql_that_bypassed_the_rewriter() {
    let (b, _a, fp) = arena();
    let (conn, policy) = raw_conn(&b, "attacker", Arc::new(Owners::default()));
    // Idle connection: nothing at all.
    auth_denied(&conn, "SELECT * FROM plugin_attacker_t");
    policy.set_phase(Phase::Read);
    conn.execute_batch("SELECT * FROM plugin_attacker_t")
        .expect("own table");
    for sql in [
        "SELECT * FROM plugin_victim_secrets",
        "SELECT count(*) FROM plugin_victim_secrets",
        "SELECT 1 FROM plugin_victim_secrets",
        "SELECT count(*) FROM sqlite_master",
        "SELECT count(*) FROM kaged_storage_owners",
        "SELECT count(*) FROM dbstat",
        "SELECT * FROM dbstat",
        "SELECT * FROM PLUGIN_VICTIM_SECRETS",
        "SELECT * FROM main.plugin_victim_secrets",
        "SELECT * FROM plugin_victim_secret_view",
        "SELECT * FROM sqlite_master",
        "SELECT * FROM sqlite_schema",
        "SELECT * FROM pragma_table_list",
        "PRAGMA table_info(plugin_attacker_t)",
        "ATTACH ':memory:' AS evil",
        "INSERT INTO plugin_attacker_t (v) VALUES ('read phase')",
        "CREATE TABLE plugin_attacker_new (a)",
        "BEGIN",
        "SAVEPOINT s",
    ] {
        auth_denied(&conn, sql);
    }
    function_denied(&conn, "SELECT load_extension('x')", "load_extension");
    function_denied(&conn, "SELECT sqlite_version()", "sqlite_version");
    policy.set_phase(Phase::Write);
    conn.execute_batch("INSERT INTO plugin_attacker_t (v) VALUES ('write phase')")
        .expect("own insert");
    auth_denied(&conn, "DELETE FROM plugin_victim_secrets");
    auth_denied(
        &conn,
        "UPDATE plugin_attacker_t SET v = (SELECT secret FROM plugin_victim_secrets)",
    );
    auth_denied(&conn, "CREATE TABLE plugin_attacker_new (a)");
    policy.set_phase(Phase::Schema);
    conn.execute_batch("CREATE TABLE plugin_attacker_new (a UNIQUE)")
        .expect("own DDL");
    conn.execute_batch("ALTER TABLE plugin_attacker_new RENAME COLUMN a TO b")
        .expect("own rename");
    conn.execute_batch("DROP TABLE plugin_attacker_new")
        .expect("own drop");
    for sql in [
        "CREATE TABLE plugin_victim_new (a)",
        "CREATE TEMP TABLE plugin_attacker_tmp (a)",
        "CREATE TABLE evil AS SELECT * FROM plugin_victim_secrets",
        "DROP TABLE plugin_victim_secrets",
        "DROP TRIGGER plugin_victim_on_secret",
        "ALTER TABLE plugin_victim_secrets ADD COLUMN x",
        "CREATE INDEX plugin_attacker_i ON plugin_victim_secrets (secret)",
        "CREATE TRIGGER plugin_attacker_tr AFTER INSERT ON plugin_victim_secrets BEGIN SELECT 1; END",
        "CREATE VIRTUAL TABLE plugin_attacker_v USING fts5(a)",
        "PRAGMA writable_schema = 1",
    ] {
        auth_denied(&conn, sql);
    }
    // Views and triggers are checked when they run, against the tables
    // they touch: plant some with a privileged connection, then use them.
    let admin = rusqlite::Connection::open(b.path()).expect("admin");
    admin
        .execute_batch(
            "CREATE VIEW plugin_attacker_leak AS SELECT secret FROM plugin_victim_secrets;
             CREATE TRIGGER plugin_attacker_wipe AFTER INSERT ON plugin_attacker_t
               BEGIN DELETE FROM plugin_victim_secrets; END;",
        )
        .expect("plant");
    policy.set_phase(Phase::Read);
    auth_denied(&conn, "SELECT * FROM plugin_attacker_leak");
    policy.set_phase(Phase::Write);
    auth_denied(
        &conn,
        "INSERT INTO plugin_attacker_t (v) VALUES ('fires the trigger')",
    );
    policy.set_phase(Phase::Closed);
    assert_eq!(victim_fingerprint(&b), fp);
}

#[test]
fn the_authorizer_honours_the_owner_registry() {
    // The spec's prefix is not injective; the registry says whose an object
    // under a plugin's prefix is, in the authorizer as in the broker.
    let b = broker();
    ok(exec(&b, &writer("foo"), "CREATE TABLE x (a)", json!([])));
    let owners = Arc::new(Owners::default());
    owners.insert("plugin_foo_x", "zed");
    let (conn, policy) = raw_conn(&b, "foo", Arc::clone(&owners));
    policy.set_phase(Phase::Read);
    auth_denied(&conn, "SELECT * FROM plugin_foo_x");
    owners.insert("plugin_foo_x", "foo");
    conn.execute_batch("SELECT * FROM plugin_foo_x")
        .expect("owner reads");
    // A look-alike plugin never reaches it, whoever it is registered to.
    owners.insert("plugin_foo_x", "foo-x");
    let (conn, policy) = raw_conn(&b, "foo-x", owners);
    policy.set_phase(Phase::Read);
    auth_denied(&conn, "SELECT * FROM plugin_foo_x");
}
