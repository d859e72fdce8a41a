//! A plugin's connection to the shared database, and running one rewritten
//! statement on it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kaged_plugin_protocol::{ErrorCode, SqlValue};
use rusqlite::{Connection, Statement};
use serde_json::{json, Map, Value};

use super::authorizer::{AuthPolicy, Owners, Phase, OWNERS_TABLE};
use super::client::StorageDenial;
use super::quota::{Meter, QuotaExceeded};
use super::rewrite::{Rewritten, StatementKind};
use super::values::{to_json, Bind};
use super::write_queue::WriteQueue;

/// One plugin's connection and its authorizer policy.
pub(super) struct PluginDb {
    pub(super) plugin: String,
    pub(super) prefix: String,
    pub(super) policy: Arc<AuthPolicy>,
    pub(super) conn: Mutex<Connection>,
    /// The plugin's quota and the connection's page geometry.
    pub(super) meter: Meter,
    /// The plugin's usage in pages; `None` until first measured (see
    /// `quota.rs`). Only changed with `conn` locked.
    pub(super) usage: Mutex<Option<i64>>,
}

impl PluginDb {
    fn usage(&self) -> Option<i64> {
        *self.usage.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_usage(&self, pages: i64) {
        *self.usage.lock().unwrap_or_else(|e| e.into_inner()) = Some(pages);
    }

    fn forget_usage(&self) {
        *self.usage.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// A `query` answer larger than this (approximate JSON bytes) is refused.
pub const MAX_RESULT_BYTES: usize = 4 * 1024 * 1024;

/// What a call runs with.
pub(super) struct ExecEnv<'a> {
    pub(super) db: &'a PluginDb,
    pub(super) owners: &'a Owners,
    /// How long the statement may run: the statement budget for a `query`,
    /// the write budget for an `exec`.
    pub(super) budget: Duration,
    /// The queue writes take turns in, and how long one waits for its turn.
    pub(super) writes: &'a WriteQueue,
    pub(super) write_wait: Duration,
    /// The plugin's original SQL (for redaction in errors).
    pub(super) sql: &'a str,
}

/// Puts the policy back to [`Phase::Closed`] (and clears the deadline)
/// however the call ends.
struct CallGuard<'a>(&'a AuthPolicy);

impl<'a> CallGuard<'a> {
    fn start(policy: &'a AuthPolicy, budget: Duration) -> CallGuard<'a> {
        policy.set_deadline(Some(Instant::now() + budget));
        CallGuard(policy)
    }
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.0.set_phase(Phase::Closed);
        self.0.set_deadline(None);
    }
}

/// Remove every (ASCII-case-insensitive) occurrence of `prefix` from `s`.
pub fn unprefix(s: &str, prefix: &str) -> String {
    if prefix.is_empty() {
        return s.to_owned();
    }
    let lower = s.to_ascii_lowercase();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while let Some(pos) = lower[i..].find(prefix) {
        out.push_str(&s[i..i + pos]);
        i += pos + prefix.len();
    }
    out.push_str(&s[i..]);
    out
}

impl ExecEnv<'_> {
    fn error(&self, e: &rusqlite::Error) -> StorageDenial {
        let sql = Some(self.sql);
        let msg = unprefix(&e.to_string(), &self.db.prefix);
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::AuthorizationForStatementDenied) => {
                StorageDenial::denied(format!("refused by the storage authorizer ({msg})"), sql)
            }
            Some(rusqlite::ErrorCode::OperationInterrupted) => StorageDenial::with(
                ErrorCode::InternalError,
                format!("statement interrupted after {} ms", self.budget.as_millis()),
                "time budget exceeded",
                sql,
            ),
            // Only a writing statement runs under a page limit (quota.rs).
            // SQLite stopped the statement at the page limit: measure the
            // plugin again on its next call, in case its usage was stale.
            Some(rusqlite::ErrorCode::DiskFull) => {
                let usage = self.db.usage().unwrap_or(0);
                self.db.forget_usage();
                quota_denial(self.db.meter.exceeded(&self.db.plugin, usage), self.sql)
            }
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                StorageDenial::with(ErrorCode::ResourceBusy, "storage is busy, retry", msg, sql)
            }
            _ if msg.contains("not authorized") => {
                StorageDenial::denied(format!("refused by the storage authorizer ({msg})"), sql)
            }
            _ => StorageDenial::with(ErrorCode::InvalidParams, msg.clone(), msg, sql),
        }
    }

    fn invalid(&self, msg: String) -> StorageDenial {
        StorageDenial::with(ErrorCode::InvalidParams, msg.clone(), msg, Some(self.sql))
    }

    fn prepare<'c>(
        &self,
        conn: &'c Connection,
        sql: &str,
        params: &[SqlValue],
    ) -> Result<Statement<'c>, StorageDenial> {
        let mut stmt = conn.prepare(sql).map_err(|e| self.error(&e))?;
        if stmt.parameter_count() != params.len() {
            return Err(self.invalid(format!(
                "the statement has {} parameters, {} given",
                stmt.parameter_count(),
                params.len()
            )));
        }
        for (i, v) in params.iter().enumerate() {
            stmt.raw_bind_parameter(i + 1, Bind(v))
                .map_err(|e| self.error(&e))?;
        }
        Ok(stmt)
    }
}

/// `kaged.storage.query`: `{"rows": [{column: value}], "columns": [..]}`.
pub(super) fn query(
    env: &ExecEnv<'_>,
    conn: &Connection,
    rw: &Rewritten,
    params: &[SqlValue],
) -> Result<Value, StorageDenial> {
    let policy = &env.db.policy;
    let _guard = CallGuard::start(policy, env.budget);
    policy.set_phase(Phase::Read);
    let mut stmt = env.prepare(conn, &rw.sql, params)?;
    if !stmt.readonly() {
        return Err(StorageDenial::denied(
            "kaged.storage.query only runs read-only statements",
            Some(env.sql),
        ));
    }
    let columns: Vec<String> = stmt
        .column_names()
        .map(|c| unprefix(c, &env.db.prefix))
        .collect();
    let mut rows_out = Vec::new();
    let mut size = 0usize;
    let mut rows = stmt.raw_query();
    while let Some(row) = rows.next().map_err(|e| env.error(&e))? {
        let mut obj = Map::new();
        for (i, name) in columns.iter().enumerate() {
            let v = to_json(row.get_ref(i).map_err(|e| env.error(&e))?);
            size += 16
                + name.len()
                + v.as_str().map_or(0, str::len)
                + v.get("$base64").and_then(Value::as_str).map_or(0, str::len);
            obj.insert(name.clone(), v);
        }
        if size > MAX_RESULT_BYTES {
            return Err(env.invalid(format!(
                "the result exceeds {MAX_RESULT_BYTES} bytes; use LIMIT"
            )));
        }
        rows_out.push(Value::Object(obj));
    }
    Ok(json!({ "rows": rows_out, "columns": columns }))
}

/// The catalogue: lowercase object name to lowercase table name.
fn catalogue(conn: &Connection) -> rusqlite::Result<HashMap<String, String>> {
    let mut stmt = conn.prepare("SELECT name, tbl_name FROM sqlite_master")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    rows.map(|r| r.map(|(n, t)| (n.to_ascii_lowercase(), t.to_ascii_lowercase())))
        .collect()
}

/// Objects created and removed by a DDL statement.
#[derive(Default)]
struct SchemaDiff {
    added: Vec<String>,
    removed: Vec<String>,
}

/// Check a DDL statement's effect on the catalogue (defence in depth: e.g.
/// SQLite does not authorize the *target* name of `ALTER TABLE ... RENAME
/// TO`) and record it in the owners registry, inside the transaction.
fn register(
    env: &ExecEnv<'_>,
    conn: &Connection,
    before: &HashMap<String, String>,
) -> Result<SchemaDiff, StorageDenial> {
    let after = catalogue(conn).map_err(|e| env.error(&e))?;
    let policy = &env.db.policy;
    let mine = |name: &str, table: &str| {
        if name.starts_with("sqlite_autoindex_") {
            policy.owns(table)
        } else {
            name == "sqlite_sequence" || policy.owns(name)
        }
    };
    let mut diff = SchemaDiff::default();
    for (name, table) in after.iter().filter(|(n, _)| !before.contains_key(*n)) {
        if !mine(name, table) {
            return Err(StorageDenial::denied(
                "the statement would create an object outside the plugin's storage",
                Some(env.sql),
            ));
        }
        if name.starts_with(&env.db.prefix) {
            diff.added.push(name.clone());
        }
    }
    for (name, table) in before.iter().filter(|(n, _)| !after.contains_key(*n)) {
        if !mine(name, table) {
            return Err(StorageDenial::denied(
                "the statement would remove an object outside the plugin's storage",
                Some(env.sql),
            ));
        }
        if name.starts_with(&env.db.prefix) {
            diff.removed.push(name.clone());
        }
    }
    let run = |sql: String, name: &str| -> Result<(), StorageDenial> {
        conn.execute(&sql, rusqlite::params![name, env.db.plugin])
            .map(drop)
            .map_err(|e| env.error(&e))
    };
    for name in &diff.added {
        run(
            format!("INSERT OR REPLACE INTO {OWNERS_TABLE} (name, plugin) VALUES (?1, ?2)"),
            name,
        )?;
    }
    for name in &diff.removed {
        run(
            format!("DELETE FROM {OWNERS_TABLE} WHERE name = ?1 AND plugin = ?2"),
            name,
        )?;
    }
    Ok(diff)
}

fn run_statement(
    env: &ExecEnv<'_>,
    conn: &Connection,
    rw: &Rewritten,
    params: &[SqlValue],
) -> Result<u64, StorageDenial> {
    let mut stmt = env.prepare(conn, &rw.sql, params)?;
    let changed = if stmt.column_count() == 0 {
        stmt.raw_execute().map_err(|e| env.error(&e))? as u64
    } else {
        let mut rows = stmt.raw_query();
        while rows.next().map_err(|e| env.error(&e))?.is_some() {}
        conn.changes()
    };
    Ok(if rw.kind == StatementKind::Write {
        changed
    } else {
        0
    })
}

/// A quota refusal: `-32003` with [`QuotaExceeded`]'s message, audited
/// with reason `quota`.
fn quota_denial(e: QuotaExceeded, sql: &str) -> StorageDenial {
    StorageDenial::with(
        ErrorCode::StorageAccessDenied,
        e.to_string(),
        "quota",
        Some(sql),
    )
}

/// Run the statement under the plugin's quota (quota.rs): with the page
/// limit lowered while it runs, and its growth checked after. Answers the
/// rows changed and the plugin's new usage in pages.
fn run_metered(
    env: &ExecEnv<'_>,
    conn: &Connection,
    rw: &Rewritten,
    params: &[SqlValue],
) -> Result<(u64, i64), StorageDenial> {
    let policy = &env.db.policy;
    let meter = &env.db.meter;
    let owns = |t: &str| policy.owns(t);
    let schema = rw.kind == StatementKind::Schema;
    let start = meter
        .begin(conn, env.db.usage(), schema, owns)
        .map_err(|e| env.error(&e))?;
    env.db.set_usage(start.usage());
    policy.set_phase(match rw.kind {
        StatementKind::Read => Phase::Read,
        StatementKind::Write => Phase::Write,
        StatementKind::Schema => Phase::Schema,
    });
    let n = run_statement(env, conn, rw, params);
    policy.set_phase(Phase::Broker);
    let reset = meter.end(conn).map_err(|e| env.error(&e));
    let n = n?;
    reset?;
    match meter
        .check(conn, &env.db.plugin, start, owns)
        .map_err(|e| env.error(&e))?
    {
        Ok(after) => Ok((n, after)),
        Err((e, usage)) => {
            env.db.set_usage(usage);
            Err(quota_denial(e, env.sql))
        }
    }
}

/// `kaged.storage.exec`: the statement in its own transaction, rolled back
/// on any error or past the plugin's quota; answers `{"rows_affected": n}`.
/// It waits for its turn at the write lock (`write_queue.rs`) first.
pub(super) fn exec(
    env: &ExecEnv<'_>,
    conn: &Connection,
    rw: &Rewritten,
    params: &[SqlValue],
) -> Result<Value, StorageDenial> {
    // The turn first, then the budget: the budget bounds how long the
    // write lock is held, not the wait for it.
    let _turn = env.writes.enter(env.write_wait).ok_or_else(|| {
        StorageDenial::with(
            ErrorCode::ResourceBusy,
            "storage is busy, retry",
            format!(
                "no turn at the write lock in {} ms: other plugins' writes came first",
                env.write_wait.as_millis()
            ),
            Some(env.sql),
        )
    })?;
    let policy = &env.db.policy;
    let _guard = CallGuard::start(policy, env.budget);
    policy.set_phase(Phase::Broker);
    conn.execute_batch("BEGIN IMMEDIATE")
        .map_err(|e| env.error(&e))?;
    let result = (|| {
        let before = match rw.kind {
            StatementKind::Schema => Some(catalogue(conn).map_err(|e| env.error(&e))?),
            _ => None,
        };
        let (n, usage) = run_metered(env, conn, rw, params)?;
        let diff = match before {
            Some(before) => register(env, conn, &before)?,
            None => SchemaDiff::default(),
        };
        conn.execute_batch("COMMIT").map_err(|e| env.error(&e))?;
        Ok((n, diff, usage))
    })();
    match result {
        Ok((n, diff, usage)) => {
            env.db.set_usage(usage);
            for name in &diff.removed {
                env.owners.remove(name);
            }
            for name in &diff.added {
                env.owners.insert(name, &env.db.plugin);
            }
            Ok(json!({ "rows_affected": n }))
        }
        Err(e) => {
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            Err(e)
        }
    }
}
