//! The SQL rewriter on any text: it never panics; a statement SQLite can
//! parse stays one SQLite can parse once rewritten (the rewriter read it
//! as SQLite does); every object it names carries the plugin's prefix; and
//! rewriting is deterministic. Redaction never panics either.
//!
//! The judge of "parses" is SQLite itself, not sqlparser: the rewriter
//! writes `INSERT INTO "plugin_x_t" AS t`, which SQLite accepts and
//! sqlparser's SQLite dialect does not. Input SQLite itself refuses may
//! come out refused: SQLite's error then reaches the plugin at execution.
#![no_main]

use kaged_host_storage::{redact_sql, rewrite};
use libfuzzer_sys::fuzz_target;

const PREFIX: &str = "plugin_fuzz_";

thread_local! {
    static DB: rusqlite::Connection = rusqlite::Connection::open_in_memory().expect("an in-memory database");
}

/// SQLite's verdict on the syntax of `sql`: `Err` only for a syntax error
/// (unknown tables, columns and functions are fine here).
fn sqlite_parses(sql: &str) -> Result<(), String> {
    DB.with(|db| match db.prepare(sql) {
        Ok(_) => Ok(()),
        Err(e) => {
            let text = e.to_string();
            if text.contains("syntax error")
                || text.contains("incomplete input")
                || text.contains("unrecognized token")
            {
                Err(text)
            } else {
                Ok(())
            }
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else {
        return;
    };
    let _ = redact_sql(sql);
    let Ok(r) = rewrite(PREFIX, sql) else {
        return;
    };
    if let (Ok(()), Err(e)) = (sqlite_parses(sql), sqlite_parses(&r.sql)) {
        panic!(
            "SQLite parses {sql:?}, but not what it became, {:?}: {e}",
            r.sql
        );
    }
    for object in &r.objects {
        assert!(object.starts_with(PREFIX), "{sql:?} names {object:?}");
    }
    assert_eq!(rewrite(PREFIX, sql).ok(), Some(r));
});
