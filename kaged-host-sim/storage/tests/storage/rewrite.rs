//! The SQL rewriter on its own: exact rewrites, scoping of CTEs and
//! aliases, placeholders, statement kinds, and refusals.

use kaged_host_storage::{rewrite, RewriteCache, RewriteError, StatementKind};

const P: &str = "plugin_oh_my_pi_";

#[track_caller]
fn rw(sql: &str) -> String {
    match rewrite(P, sql) {
        Ok(r) => r.sql,
        Err(e) => panic!("{sql}: {e}"),
    }
}

#[track_caller]
fn kind(sql: &str) -> StatementKind {
    match rewrite(P, sql) {
        Ok(r) => r.kind,
        Err(e) => panic!("{sql}: {e}"),
    }
}

#[track_caller]
fn denied(sql: &str) -> String {
    match rewrite(P, sql) {
        Err(RewriteError::Denied(reason)) => reason,
        other => panic!("{sql}: expected a denial, got {other:?}"),
    }
}

#[test]
fn tables_are_prefixed_and_aliased_to_their_plugin_facing_name() {
    assert_eq!(
        rw("SELECT presets.name FROM presets"),
        r#"SELECT presets.name FROM "plugin_oh_my_pi_presets" AS presets"#
    );
    assert_eq!(
        rw("SELECT * FROM presets p"),
        r#"SELECT * FROM "plugin_oh_my_pi_presets" p"#
    );
    assert_eq!(
        rw("SELECT * FROM presets AS p"),
        r#"SELECT * FROM "plugin_oh_my_pi_presets" AS p"#
    );
    // Quoted, bracketed and backticked names keep their spelling in the alias.
    assert_eq!(
        rw("SELECT * FROM \"My Presets\""),
        r#"SELECT * FROM "plugin_oh_my_pi_My Presets" AS "My Presets""#
    );
    assert_eq!(
        rw("SELECT * FROM [presets]"),
        r#"SELECT * FROM "plugin_oh_my_pi_presets" AS [presets]"#
    );
    assert_eq!(
        rw("SELECT * FROM `presets`"),
        r#"SELECT * FROM "plugin_oh_my_pi_presets" AS `presets`"#
    );
    assert_eq!(
        rw("SELECT * FROM \"a\"\"b\""),
        r#"SELECT * FROM "plugin_oh_my_pi_a""b" AS "a""b""#
    );
}

#[test]
fn every_nested_table_reference_is_rewritten() {
    let cases = [
        "SELECT * FROM a JOIN b ON a.id = b.id LEFT JOIN c USING (id)",
        "SELECT * FROM a WHERE id IN (SELECT id FROM b) AND EXISTS (SELECT 1 FROM c)",
        "SELECT (SELECT max(id) FROM b) FROM a, c",
        "SELECT * FROM (SELECT * FROM (SELECT * FROM a) x JOIN b ON 1) y, c",
        "SELECT id FROM a UNION SELECT id FROM b EXCEPT SELECT id FROM c",
        "INSERT INTO a (id) SELECT id FROM b WHERE id NOT IN (SELECT id FROM c)",
        "UPDATE a SET v = b.v FROM b WHERE b.id = a.id AND a.id IN (SELECT id FROM c)",
        "DELETE FROM a WHERE id IN (SELECT id FROM b JOIN c ON 1)",
        "CREATE VIEW a AS SELECT * FROM b, c",
        "CREATE TABLE a AS SELECT * FROM b WHERE EXISTS (SELECT 1 FROM c)",
        "CREATE TRIGGER a AFTER INSERT ON b BEGIN INSERT INTO c (v) VALUES (new.v); END",
        "CREATE TRIGGER a AFTER INSERT ON b WHEN (SELECT count(*) FROM c) > 0 BEGIN SELECT 1; END",
        "CREATE TRIGGER a BEFORE DELETE ON b BEGIN UPDATE c SET v = 1; DELETE FROM c WHERE v IN (SELECT v FROM b); END",
    ];
    for sql in cases {
        let out = rw(sql);
        for t in ["a", "b", "c"] {
            assert!(
                out.contains(&format!("\"plugin_oh_my_pi_{t}\"")),
                "{sql} -> {out}"
            );
        }
        // Nothing is left unprefixed in a table position: the rewritten SQL,
        // rewritten again for another plugin, is refused (plugin_ names).
        assert!(rewrite("plugin_other_", &out).is_err(), "{out}");
    }
}

#[test]
fn trigger_body_targets_are_not_aliased() {
    // SQLite allows no alias on the target of a DML statement in a trigger body.
    let out = rw("CREATE TRIGGER tr AFTER INSERT ON a BEGIN UPDATE b SET v = 1; DELETE FROM c; INSERT INTO d VALUES (1); END");
    assert_eq!(
        out,
        r#"CREATE TRIGGER "plugin_oh_my_pi_tr" AFTER INSERT ON "plugin_oh_my_pi_a" BEGIN UPDATE "plugin_oh_my_pi_b" SET v = 1; DELETE FROM "plugin_oh_my_pi_c"; INSERT INTO "plugin_oh_my_pi_d" VALUES (1); END"#
    );
    let reason = denied("CREATE TRIGGER tr AFTER INSERT ON a BEGIN UPDATE b AS x SET v = 1; END");
    assert!(reason.contains("alias"), "{reason}");
}

#[test]
fn cte_names_are_scoped_and_never_prefixed() {
    // The CTE shadows the table in its scope...
    assert_eq!(
        rw("WITH presets AS (SELECT 1 AS x) SELECT * FROM presets"),
        "WITH presets AS (SELECT 1 AS x) SELECT * FROM presets"
    );
    // ...CTEs of one WITH see each other (SQLite allows forward references)...
    let out = rw("WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a, c");
    assert!(
        out.contains("FROM b)") && out.contains(r#""plugin_oh_my_pi_c" AS c"#),
        "{out}"
    );
    // ...but not outside their query.
    let out = rw("SELECT * FROM (WITH x AS (SELECT 1) SELECT * FROM x) AS s, x");
    assert!(
        out.contains("SELECT * FROM x)") && out.contains(r#""plugin_oh_my_pi_x" AS x"#),
        "{out}"
    );
    // DML targets are always tables, even when a CTE has the same name.
    let out = rw("WITH t AS (SELECT 1 AS id) DELETE FROM t WHERE id IN (SELECT id FROM t)");
    assert!(
        out.starts_with("WITH t AS (SELECT 1 AS id) DELETE FROM \"plugin_oh_my_pi_t\" AS t"),
        "{out}"
    );
    let out = rw("WITH t AS (SELECT 1 AS v) INSERT INTO t (v) SELECT v FROM t");
    assert!(out.contains("INSERT INTO \"plugin_oh_my_pi_t\""), "{out}");
    // Recursive CTEs.
    let out = rw("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT x FROM n");
    assert!(!out.contains("plugin_"), "{out}");
}

#[test]
fn ddl_names_are_prefixed() {
    assert_eq!(
        rw("CREATE TABLE IF NOT EXISTS presets (id TEXT PRIMARY KEY, name TEXT)"),
        r#"CREATE TABLE IF NOT EXISTS "plugin_oh_my_pi_presets" (id TEXT PRIMARY KEY, name TEXT)"#
    );
    assert_eq!(
        rw("DROP TABLE IF EXISTS presets"),
        r#"DROP TABLE IF EXISTS "plugin_oh_my_pi_presets""#
    );
    assert_eq!(rw("DROP VIEW v"), r#"DROP VIEW "plugin_oh_my_pi_v""#);
    assert_eq!(rw("DROP INDEX i"), r#"DROP INDEX "plugin_oh_my_pi_i""#);
    assert_eq!(
        rw("DROP TRIGGER tr"),
        r#"DROP TRIGGER "plugin_oh_my_pi_tr""#
    );
    assert_eq!(
        rw("ALTER TABLE presets RENAME TO configs"),
        r#"ALTER TABLE "plugin_oh_my_pi_presets" RENAME TO "plugin_oh_my_pi_configs""#
    );
    assert_eq!(
        rw("ALTER TABLE presets RENAME COLUMN a TO b"),
        r#"ALTER TABLE "plugin_oh_my_pi_presets" RENAME COLUMN a TO b"#
    );
    let out = rw("CREATE UNIQUE INDEX IF NOT EXISTS by_name ON presets (name)");
    assert!(
        out.contains(r#""plugin_oh_my_pi_by_name" ON "plugin_oh_my_pi_presets""#),
        "{out}"
    );
    let out = rw(
        "CREATE TABLE c (p INTEGER REFERENCES parent (id), FOREIGN KEY (p) REFERENCES parent (id))",
    );
    assert_eq!(
        out.matches(r#""plugin_oh_my_pi_parent""#).count(),
        2,
        "{out}"
    );
}

#[test]
fn placeholders_are_kept_verbatim() {
    for (sql, marks) in [
        ("SELECT * FROM t WHERE a = ? AND b = ?", &["?", "?"][..]),
        ("SELECT * FROM t WHERE a = ?2 AND b = ?1", &["?2", "?1"][..]),
        ("SELECT * FROM t WHERE a = :a AND b = :b", &[":a", ":b"][..]),
        ("INSERT INTO t (a, b) VALUES (?1, ?)", &["?1", "?"][..]),
        ("SELECT * FROM t WHERE a = @x OR b = $y", &["@x", "$y"][..]),
        ("SELECT * FROM t LIMIT ? OFFSET ?", &["?", "?"][..]),
    ] {
        let out = rw(sql);
        let mut rest = out.as_str();
        for m in marks {
            let at = rest
                .find(m)
                .unwrap_or_else(|| panic!("{m} missing in {out}"));
            rest = &rest[at + m.len()..];
        }
    }
}

#[test]
fn statement_kinds() {
    assert_eq!(kind("SELECT 1"), StatementKind::Read);
    assert_eq!(kind("VALUES (1), (2)"), StatementKind::Read);
    assert_eq!(
        kind("WITH x AS (SELECT 1) SELECT * FROM x"),
        StatementKind::Read
    );
    assert_eq!(kind("INSERT INTO t VALUES (1)"), StatementKind::Write);
    assert_eq!(
        kind("WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x"),
        StatementKind::Write
    );
    assert_eq!(kind("UPDATE t SET a = 1"), StatementKind::Write);
    assert_eq!(kind("DELETE FROM t"), StatementKind::Write);
    assert_eq!(kind("REPLACE INTO t VALUES (1)"), StatementKind::Write);
    assert_eq!(kind("CREATE TABLE t (a)"), StatementKind::Schema);
    assert_eq!(kind("DROP TABLE t"), StatementKind::Schema);
    assert_eq!(kind("ALTER TABLE t ADD COLUMN b"), StatementKind::Schema);
}

#[test]
fn refusals_are_denials_and_syntax_errors_are_not() {
    for sql in [
        "SELECT * FROM sqlite_master",
        "SELECT * FROM \"SQLITE_SCHEMA\"",
        "SELECT * FROM [Sqlite_Sequence]",
        "SELECT * FROM `pragma_table_info`",
        "SELECT * FROM pragma_table_info('t')",
        "SELECT * FROM plugin_victim_t",
        "SELECT * FROM plugin_oh_my_pi_t",
        "SELECT * FROM main.t",
        "SELECT * FROM temp.t",
        "SELECT * FROM a.b",
        "SELECT main.t.c FROM t",
        "WITH sqlite_master AS (SELECT 1) SELECT * FROM sqlite_master",
        "WITH plugin_x_t AS (SELECT 1) SELECT * FROM plugin_x_t",
        "CREATE TEMP TABLE t (a)",
        "CREATE TEMPORARY VIEW v AS SELECT 1",
        "CREATE TEMP TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END",
        "CREATE VIRTUAL TABLE v USING fts5(a)",
        "CREATE INDEX ON t (a)",
        "ATTACH 'x' AS y",
        "DETACH y",
        "PRAGMA foreign_keys",
        "VACUUM",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT a",
        "RELEASE a",
        "SELECT load_extension('x')",
        "SELECT Load_Extension('x')",
        "SELECT sqlite_source_id()",
        "SELECT * FROM json_each('[]')",
        "SELECT 1; SELECT 2",
        "INSERT INTO t VALUES (1); DROP TABLE t",
        "TRUNCATE TABLE t",
        "GRANT SELECT ON t TO x",
        "ALTER TABLE t RENAME TO plugin_x",
        "ALTER TABLE t RENAME TO sqlite_x",
        "DROP SCHEMA s",
    ] {
        let reason = denied(sql);
        assert!(
            sql.contains(P) || !reason.contains(P),
            "{sql}: the reason must not reveal the prefix: {reason}"
        );
    }
    for sql in [
        "SELEC 1",
        "SELECT * FROM",
        "",
        "   ",
        "SELECT 'unterminated",
    ] {
        assert!(
            matches!(rewrite(P, sql), Err(RewriteError::Invalid(_))),
            "{sql}"
        );
    }
}

#[test]
fn the_cache_returns_the_same_rewrite() {
    let cache = RewriteCache::new(16);
    let a = cache.get_or_rewrite(P, "SELECT * FROM t").expect("rewrite");
    let b = cache.get_or_rewrite(P, "SELECT * FROM t").expect("rewrite");
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    assert_eq!(cache.len(), 1);
    assert!(cache.get_or_rewrite(P, "PRAGMA x").is_err());
    assert_eq!(cache.len(), 1);
}

#[test]
fn deep_statements_neither_crash_nor_overflow_the_stack() {
    // A plugin must not be able to abort the host with a stack overflow:
    // run on a thread with the 2 MiB stack of tokio's blocking pool.
    let cases = [
        format!("SELECT {}1", "1 + ".repeat(4990)),
        format!("SELECT {}1", "1 + ".repeat(100_000)),
        format!("SELECT {}1", "- ".repeat(9000)),
        format!("SELECT {}1{}", "(".repeat(5000), ")".repeat(5000)),
        format!("SELECT * FROM t WHERE {}1", "a = 1 OR ".repeat(2400)),
        format!("SELECT 1 {}", "UNION SELECT 1 ".repeat(3000)),
        format!("SELECT * FROM t {}", "JOIN t ON 1 ".repeat(2400)),
    ];
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            cases
                .iter()
                .map(|sql| {
                    let _ = kaged_host_storage::redact_sql(sql);
                    rewrite(P, sql).is_ok()
                })
                .collect::<Vec<bool>>()
        })
        .expect("spawn");
    let ok = handle.join().expect("no panic");
    assert_eq!(ok, [true, false, false, false, true, true, true]);
}

#[test]
fn create_trigger_if_not_exists_is_supported() {
    assert_eq!(
        rw("create trigger  if not exists tr AFTER INSERT ON a BEGIN DELETE FROM b; END"),
        r#"CREATE TRIGGER IF NOT EXISTS "plugin_oh_my_pi_tr" AFTER INSERT ON "plugin_oh_my_pi_a" BEGIN DELETE FROM "plugin_oh_my_pi_b"; END"#
    );
    assert!(rewrite(
        P,
        "CREATE TRIGGER IF NOT EXISTS tr AFTER INSERT ON sqlite_master BEGIN SELECT 1; END"
    )
    .expect_err("reserved")
    .is_denial());
}

#[test]
fn reprints_that_would_change_meaning_are_refused() {
    // sqlparser prints `- -1` as `--1`, a comment to SQLite.
    for sql in ["SELECT - -1", "DELETE FROM t WHERE a = - -1 AND b = 2"] {
        assert!(
            matches!(rewrite(P, sql), Err(RewriteError::Invalid(_))),
            "{sql}"
        );
    }
    // Hexadecimal integers stay integers (sqlparser reads them as blobs).
    assert_eq!(rw("SELECT 0x10, X'10'"), "SELECT 16, X'10'");
    assert_eq!(
        rw("SELECT 'é0x', X'10',\n   x'0a' ||\n 0x0a"),
        "SELECT 'é0x', X'10', X'0a' || 10"
    );
    assert_eq!(rw("SELECT -0xFFFFFFFFFFFFFFFF"), "SELECT -(-1)");
    assert!(matches!(
        rewrite(P, "SELECT 0x1FFFFFFFFFFFFFFFF"),
        Err(RewriteError::Invalid(_))
    ));
}

/// Found by the `sql_rewrite` fuzz target: sqlparser read `x * FROM t` as
/// `x` times a column named `FROM`, aliased `t`, and the rewriter printed
/// `x * FROM AS t`, which SQLite refuses (and a reading in which `t` is
/// no table is one where it goes unprefixed). A bare reserved word where a
/// column name would be is refused; quoted, it is a column name.
#[test]
fn a_bare_reserved_word_is_never_read_as_a_column() {
    for sql in [
        "SELECT x* FROM presets",
        "WITH presets AS (SELECT 1 AS x) SELECT x* FROM presets",
        "SELECT a FROM t WHERE b = select",
        "SELECT t.from FROM t",
    ] {
        match rewrite(P, sql) {
            Err(RewriteError::Invalid(why)) => {
                assert!(why.contains("is an SQL keyword"), "{sql}: {why}")
            }
            other => panic!("{sql}: expected Invalid, got {other:?}"),
        }
    }
    assert_eq!(
        rw(r#"SELECT "from" FROM presets"#),
        r#"SELECT "from" FROM "plugin_oh_my_pi_presets" AS presets"#
    );
    assert_eq!(
        rw("SELECT * FROM presets"),
        r#"SELECT * FROM "plugin_oh_my_pi_presets" AS presets"#
    );
}

/// Found by the `sql_rewrite` fuzz target: sqlparser took `pre\u{7f}sets`
/// (a DEL inside) as one bare name, which SQLite does not.
#[test]
fn a_bare_name_holds_only_what_sqlite_takes_in_one() {
    match rewrite(P, "SELECT 1 FROM pre\u{7f}sets") {
        Err(RewriteError::Invalid(why)) => {
            assert!(why.contains("does not take in a name"), "{why}")
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert_eq!(
        rw("SELECT $x, café FROM t_1"),
        r#"SELECT $x, café FROM "plugin_oh_my_pi_t_1" AS t_1"#
    );
}

/// Found by the `sql_rewrite` fuzz target: sqlparser took `X'10CREATE'`
/// as a blob literal, which SQLite does not.
#[test]
fn a_blob_literal_is_an_even_number_of_hex_digits() {
    for sql in ["SELECT X'10CREATE's", "SELECT X'123'", "SELECT x'1g'"] {
        match rewrite(P, sql) {
            Err(RewriteError::Invalid(why)) => {
                assert!(why.contains("not a blob literal"), "{sql}: {why}")
            }
            other => panic!("{sql}: expected Invalid, got {other:?}"),
        }
    }
    assert_eq!(rw("SELECT X'10ff', x''"), "SELECT X'10ff', X''");
}
