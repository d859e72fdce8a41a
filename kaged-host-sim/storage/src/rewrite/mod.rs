//! The SQL rewriter: parse one statement, check it against the policy and
//! prefix every table-like name with the plugin's prefix.
//!
//! See the [module docs of `storage`](super) for the policy. The entry
//! point is [`rewrite`]; [`RewriteCache`](super::RewriteCache) memoises it.

mod error;
mod names;
mod statement;
mod tokens;
mod walker;

use std::ops::ControlFlow;

use sqlparser::ast::{SetExpr, Statement, VisitMut};
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

use tokens::{check_reprint, misread_tokens, precheck, several_statements, trigger_if_not_exists};

pub use error::RewriteError;
pub use names::{
    is_bare_reserved_word, is_denied_function, is_reserved_name, DENIED_FUNCTIONS,
    RESERVED_NAME_PREFIXES, SQLITE_RESERVED_WORDS,
};
pub use tokens::DENIED_LEADING_KEYWORDS;

/// The most tokens a statement may have. Operator chains (`1 + 1 + ...`)
/// parse into trees as deep as they are long, and walking, printing or
/// dropping a tree tens of thousands of levels deep overflows the stack
/// (an abort, not a panic); this bound keeps the depth far from that.
pub const MAX_STATEMENT_TOKENS: usize = 10_000;

/// The kind of a rewritten statement, which decides the capability it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatementKind {
    /// A read-only query (`SELECT`, `WITH ... SELECT`, `VALUES`).
    Read,
    /// `INSERT`, `UPDATE`, `DELETE` (possibly under `WITH`).
    Write,
    /// DDL: `CREATE`/`DROP` of tables, views, indexes, triggers, `ALTER TABLE`.
    Schema,
}

/// A statement rewritten for one plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    /// The SQL to execute, with every table, view, index and trigger name
    /// prefixed and the original placeholders intact.
    pub sql: String,
    /// What the statement does.
    pub kind: StatementKind,
    /// Every prefixed object name the statement references (lowercase,
    /// deduplicated), so the broker can check ownership before running it.
    pub objects: Vec<String>,
}

/// Rewrite `sql` for the plugin whose storage prefix is `prefix`
/// (`plugin_<name>_`, see [`storage_prefix`](super::storage_prefix)).
///
/// Exactly one statement of the allow-list is accepted; everything the
/// policy refuses is [`RewriteError::Denied`]. Never panics.
///
/// ```
/// use kaged_host_storage::{rewrite, StatementKind};
/// let r = rewrite("plugin_oh_my_pi_", "SELECT presets.name FROM presets WHERE id = ?1").unwrap();
/// assert_eq!(r.sql, r#"SELECT presets.name FROM "plugin_oh_my_pi_presets" AS presets WHERE id = ?1"#);
/// assert_eq!(r.kind, StatementKind::Read);
/// assert!(rewrite("plugin_oh_my_pi_", "SELECT * FROM sqlite_master").unwrap_err().is_denial());
/// ```
pub fn rewrite(prefix: &str, sql: &str) -> Result<Rewritten, RewriteError> {
    if sql.contains('\0') {
        // SQLite would stop reading at the NUL; sqlparser would not.
        return Err(RewriteError::Invalid("SQL contains a NUL character".into()));
    }
    let dialect = SQLiteDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize()
        .map_err(|e| RewriteError::Invalid(e.to_string()))?;
    let significant = tokens
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .count();
    if significant > MAX_STATEMENT_TOKENS {
        return Err(RewriteError::Invalid(format!(
            "statement too long ({significant} tokens, at most {MAX_STATEMENT_TOKENS}); use parameters"
        )));
    }
    precheck(&tokens)?;
    misread_tokens(&tokens)?;
    // sqlparser 0.63 does not know `CREATE TRIGGER IF NOT EXISTS`: parse
    // without the clause and put it back into the output.
    let (parse_sql, trigger_if_not_exists) = match trigger_if_not_exists().find(sql) {
        Some(m) => (format!("CREATE TRIGGER {}", &sql[m.end()..]), true),
        None => (sql.to_owned(), false),
    };
    let mut statements = Parser::parse_sql(&dialect, &parse_sql).map_err(|e| {
        if several_statements(&tokens) {
            RewriteError::denied("exactly one statement per call")
        } else {
            RewriteError::Invalid(e.to_string())
        }
    })?;
    let mut st = match statements.len() {
        1 => statements.remove(0),
        0 => return Err(RewriteError::Invalid("no SQL statement".into())),
        _ => return Err(RewriteError::denied("exactly one statement per call")),
    };
    let kind = classify(&st);
    let mut walker = walker::Walker::new(prefix, &parse_sql);
    if let ControlFlow::Break(e) = st.visit(&mut walker) {
        return Err(e);
    }
    let mut out = st.to_string();
    if trigger_if_not_exists {
        match out.strip_prefix("CREATE TRIGGER ") {
            Some(rest) => out = format!("CREATE TRIGGER IF NOT EXISTS {rest}"),
            None => {
                return Err(RewriteError::Invalid(
                    "unsupported CREATE TRIGGER form".into(),
                ))
            }
        }
    }
    check_reprint(&tokens, &out)?;
    Ok(Rewritten {
        sql: out,
        kind,
        objects: walker.into_objects(),
    })
}

fn classify(st: &Statement) -> StatementKind {
    fn writes(body: &SetExpr) -> bool {
        match body {
            SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_) | SetExpr::Merge(_) => {
                true
            }
            SetExpr::SetOperation { left, right, .. } => writes(left) || writes(right),
            SetExpr::Query(q) => writes(&q.body),
            _ => false,
        }
    }
    match st {
        Statement::Query(q) if writes(&q.body) => StatementKind::Write,
        Statement::Query(_) => StatementKind::Read,
        Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_) => StatementKind::Write,
        _ => StatementKind::Schema,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "plugin_demo_";

    fn ok(sql: &str) -> String {
        match rewrite(P, sql) {
            Ok(r) => r.sql,
            Err(e) => panic!("{sql}: {e}"),
        }
    }

    #[test]
    fn prefixes_and_aliases_tables() {
        assert_eq!(
            ok("SELECT * FROM presets"),
            r#"SELECT * FROM "plugin_demo_presets" AS presets"#
        );
        assert_eq!(
            ok("SELECT * FROM presets p"),
            r#"SELECT * FROM "plugin_demo_presets" p"#
        );
        assert_eq!(
            ok("WITH presets AS (SELECT 1) SELECT * FROM presets"),
            "WITH presets AS (SELECT 1) SELECT * FROM presets"
        );
        assert_eq!(
            ok("CREATE INDEX i ON t (a)"),
            r#"CREATE INDEX "plugin_demo_i" ON "plugin_demo_t"(a)"#
        );
    }

    #[test]
    fn refuses_hostile_forms() {
        for sql in [
            "SELECT * FROM main.t",
            "SELECT * FROM sqlite_master",
            "SELECT * FROM \"SQLite_Master\"",
            "SELECT * FROM pragma_table_info('t')",
            "SELECT * FROM plugin_victim_secrets",
            "SELECT load_extension('x')",
            "PRAGMA user_version",
            "ATTACH 'x.db' AS x",
            "DETACH x",
            "BEGIN",
            "VACUUM",
            "SELECT 1; SELECT 2",
            "CREATE TEMP TABLE t (a)",
        ] {
            let e = rewrite(P, sql).expect_err(sql);
            assert!(e.is_denial(), "{sql}: {e}");
        }
    }
}
