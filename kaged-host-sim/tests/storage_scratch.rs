use rusqlite::hooks::{AuthContext, Authorization};
use rusqlite::Connection;
#[test]
fn scratch() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.db");
    let mut c = Connection::open(&p).unwrap();
    c.execute_batch("PRAGMA journal_mode=WAL").unwrap();
    c.authorizer(Some(|ctx: AuthContext<'_>| {
        eprintln!("  {:?} db={:?} acc={:?}", ctx.action, ctx.database_name, ctx.accessor);
        Authorization::Allow
    })).unwrap();
    for sql in [
        "CREATE TABLE plugin_a_t (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE)",
        "CREATE TABLE plugin_a_u (x)",
        "INSERT INTO plugin_a_t AS t (name) VALUES ('a') RETURNING id",
        "CREATE INDEX plugin_a_i ON plugin_a_t(name)",
        "CREATE VIEW plugin_a_v AS SELECT name FROM plugin_a_t",
        "CREATE TRIGGER plugin_a_tr AFTER INSERT ON plugin_a_t BEGIN INSERT INTO plugin_a_u (x) VALUES (new.name); UPDATE plugin_a_u SET x = 1 WHERE x = 2; END",
        "INSERT INTO plugin_a_t (name) VALUES ('b')",
        "SELECT * FROM plugin_a_v AS v",
        "UPDATE plugin_a_t AS t SET name = 'c' WHERE t.id = 1",
        "DELETE FROM plugin_a_t AS t WHERE t.id = 1",
        "ALTER TABLE plugin_a_u RENAME TO plugin_a_w",
        "ALTER TABLE plugin_a_w RENAME COLUMN x TO y",
        "ALTER TABLE plugin_a_w ADD COLUMN z TEXT",
        "ALTER TABLE plugin_a_w DROP COLUMN z",
        "DROP TRIGGER plugin_a_tr",
        "DROP INDEX plugin_a_i",
        "DROP VIEW plugin_a_v",
        "DROP TABLE plugin_a_t",
        "WITH a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a",
        "SELECT lower('X'), count(*) FROM plugin_a_w",
    ] {
        eprintln!("== {sql}");
        let r = c.prepare(sql).and_then(|mut s| { let mut rows = s.raw_query(); while let Some(_) = rows.next()? {} Ok(()) });
        eprintln!("-> {r:?}");
    }
}
