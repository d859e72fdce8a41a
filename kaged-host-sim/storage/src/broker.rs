//! The storage broker: one SQLite database shared by all plugins of a host.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use kaged_plugin_protocol::names::is_plugin_name;
use kaged_plugin_protocol::{ErrorCode, StorageMethod};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};
use serde_json::{json, Value};

use super::authorizer::{install, AuthPolicy, Owners, OWNERS_TABLE};
use super::cache::RewriteCache;
use super::client::{BrokerError, StorageClient, StorageDenial};
use super::exec::{exec, query, unprefix, ExecEnv, PluginDb};
use super::limits::MAX_STATEMENT_BYTES;
use super::migrate::{migrate, quoted, Migration};
use super::quota::{Meter, DEFAULT_STORAGE_QUOTA};
use super::rewrite::{RewriteError, StatementKind};
use super::storage_prefix;
use super::values::parse_params;
use super::write_queue::WriteQueue;
use kaged_host_core::time::{
    STORAGE_BUSY_TIMEOUT, STORAGE_STATEMENT_BUDGET, STORAGE_WRITE_BUDGET, STORAGE_WRITE_WAIT_TURNS,
};
use kaged_plugin_protocol::capability::{STORAGE_READ, STORAGE_WRITE};

/// The storage broker (see the [module docs](super)). `Send + Sync`; every
/// method blocks (call it from `spawn_blocking`).
pub struct StorageBroker {
    path: PathBuf,
    admin: Mutex<Connection>,
    plugins: Mutex<HashMap<String, Arc<PluginDb>>>,
    owners: Arc<Owners>,
    cache: RewriteCache,
    time_budget: Duration,
    write_budget: Duration,
    writes: WriteQueue,
    quota: u64,
    migration: Migration,
    // Dropped last: the connections above must close before the directory goes.
    _temp: Option<tempfile::TempDir>,
}

impl std::fmt::Debug for StorageBroker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorageBroker")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Open a hardened connection to the database file.
fn connect(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    // Another process holding the file's write lock (this host's own
    // writers take turns in the broker's WriteQueue first).
    conn.busy_timeout(STORAGE_BUSY_TIMEOUT)?;
    // WAL (set by the broker at open) with NORMAL sync: commits are atomic
    // and the file never corrupts; the last commits may be lost on power
    // failure, which is fine for plugin state and much faster.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, false)?;
    // Engine limits: no value over 16 MiB (`zeroblob(1e9)` would otherwise
    // allocate a gigabyte), no SQL text over 1 MiB, no attached database.
    // SAFETY: `handle()` is the handle of `conn`, open and owned here;
    // `sqlite3_limit` only reads and writes an integer setting in it.
    unsafe {
        let db = conn.handle();
        rusqlite::ffi::sqlite3_limit(db, rusqlite::ffi::SQLITE_LIMIT_LENGTH, 16 << 20);
        rusqlite::ffi::sqlite3_limit(db, rusqlite::ffi::SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
        rusqlite::ffi::sqlite3_limit(db, rusqlite::ffi::SQLITE_LIMIT_ATTACHED, 0);
    }
    Ok(conn)
}

impl StorageBroker {
    /// Open (creating if needed) the database at `path`.
    pub fn open(path: &Path) -> Result<StorageBroker, BrokerError> {
        StorageBroker::open_inner(path.to_path_buf(), None)
    }

    /// Open a fresh database in a temporary directory kept alive (and
    /// removed) with the broker.
    pub fn open_temp() -> Result<StorageBroker, BrokerError> {
        let dir = tempfile::Builder::new()
            .prefix("kaged-storage-")
            .tempdir()?;
        let path = dir.path().join("storage.sqlite3");
        StorageBroker::open_inner(path, Some(dir))
    }

    fn open_inner(
        path: PathBuf,
        temp: Option<tempfile::TempDir>,
    ) -> Result<StorageBroker, BrokerError> {
        let admin = connect(&path)?;
        admin.pragma_update(None, "journal_mode", "WAL")?;
        admin.execute_batch(&format!(
            "CREATE TABLE IF NOT EXISTS {OWNERS_TABLE} (name TEXT PRIMARY KEY, plugin TEXT NOT NULL)"
        ))?;
        let migration = migrate(&admin)?;
        let owners = Arc::new(Owners::default());
        {
            let mut stmt = admin.prepare(&format!("SELECT name, plugin FROM {OWNERS_TABLE}"))?;
            let rows =
                stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
            for row in rows {
                let (name, plugin) = row?;
                owners.insert(&name, &plugin);
            }
        }
        Ok(StorageBroker {
            path,
            admin: Mutex::new(admin),
            plugins: Mutex::new(HashMap::new()),
            owners,
            cache: RewriteCache::new(1024),
            time_budget: STORAGE_STATEMENT_BUDGET,
            write_budget: STORAGE_WRITE_BUDGET,
            writes: WriteQueue::default(),
            quota: DEFAULT_STORAGE_QUOTA,
            migration,
            _temp: temp,
        })
    }

    /// Interrupt any plugin statement running longer than `budget`
    /// (default `STORAGE_STATEMENT_BUDGET`, 5 s); a write's budget is the
    /// shorter of this and [`with_write_budget`](Self::with_write_budget)'s.
    pub fn with_time_budget(mut self, budget: Duration) -> StorageBroker {
        self.time_budget = budget;
        self
    }

    /// Interrupt any plugin write statement (`exec`) holding the write lock
    /// longer than `budget` (default `STORAGE_WRITE_BUDGET`, 2 s). A write
    /// waits for its turn at the lock at most `STORAGE_WRITE_WAIT_TURNS`
    /// (5) such budgets, then answers `-32005`.
    pub fn with_write_budget(mut self, budget: Duration) -> StorageBroker {
        self.write_budget = budget;
        self
    }

    /// What a write statement may take: the lock for its budget, and the
    /// wait for its turn.
    fn write_budgets(&self) -> (Duration, Duration) {
        let budget = self.write_budget.min(self.time_budget);
        (budget, budget * STORAGE_WRITE_WAIT_TURNS)
    }

    /// Limit every plugin's storage to `bytes` (default
    /// [`DEFAULT_STORAGE_QUOTA`]; see `quota.rs`): past it a growing write
    /// is refused with `-32003` and rolled back.
    pub fn with_quota(mut self, bytes: u64) -> StorageBroker {
        self.quota = bytes;
        self
    }

    /// The per-plugin storage quota, in bytes.
    pub fn quota(&self) -> u64 {
        self.quota
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The plugin that created the prefixed object `name`, if the broker knows.
    pub fn owner_of(&self, name: &str) -> Option<String> {
        self.owners.owner(name)
    }

    /// What opening the database changed (see `migrate.rs`): objects
    /// claimed for the owner registry, objects moved to the spec's prefix,
    /// and plugins left under the old prefix because a name was taken.
    pub fn migration(&self) -> &Migration {
        &self.migration
    }

    fn plugin_db(&self, plugin: &str) -> Result<Arc<PluginDb>, BrokerError> {
        let mut map = lock(&self.plugins);
        if let Some(db) = map.get(plugin) {
            return Ok(Arc::clone(db));
        }
        let prefix = storage_prefix(plugin);
        let policy = Arc::new(AuthPolicy::new(plugin, &prefix, Arc::clone(&self.owners)));
        let mut conn = connect(&self.path)?;
        let meter = Meter::new(&conn, self.quota)?;
        install(&mut conn, Arc::clone(&policy))?;
        let db = Arc::new(PluginDb {
            plugin: plugin.to_owned(),
            prefix,
            policy,
            conn: Mutex::new(conn),
            meter,
            usage: Mutex::new(None),
        });
        map.insert(plugin.to_owned(), Arc::clone(&db));
        Ok(db)
    }

    /// Answer one storage call of `client`. `Ok` is the JSON `result`;
    /// `Err` carries the JSON-RPC error (`-32003` for every denial,
    /// `-32602` for malformed params or SQL, or SQL longer than
    /// [`MAX_STATEMENT_BYTES`], `-32005` when the database is busy (a write
    /// whose turn at the write lock did not come in time), `-32603` for
    /// internal failures and statements interrupted at their budget) and
    /// the audit data.
    pub fn handle(
        &self,
        client: &StorageClient,
        method: StorageMethod,
        params: Option<Value>,
    ) -> Result<Value, StorageDenial> {
        if !is_plugin_name(&client.plugin) {
            return Err(StorageDenial::denied(
                format!("invalid plugin name {:?}", client.plugin),
                None,
            ));
        }
        if !client.storage_available {
            return Err(StorageDenial::denied("storage is not available", None));
        }
        let allowed = match method {
            StorageMethod::Exec => client.may_write(),
            StorageMethod::Query | StorageMethod::Schema => client.may_read(),
        };
        if method == StorageMethod::Schema {
            if !allowed {
                return Err(StorageDenial::lacks(STORAGE_READ, method.as_str(), None));
            }
            let tables = self.tables(&client.plugin).map_err(internal)?;
            return Ok(json!({ "tables": tables }));
        }
        let sql_hint = params
            .as_ref()
            .and_then(|p| p.get("sql"))
            .and_then(Value::as_str);
        if !allowed {
            let cap = if method == StorageMethod::Exec {
                STORAGE_WRITE
            } else {
                STORAGE_READ
            };
            return Err(StorageDenial::lacks(cap, method.as_str(), sql_hint));
        }
        let parsed = parse_params(params.as_ref()).map_err(|(msg, sql)| {
            StorageDenial::with(ErrorCode::InvalidParams, msg.clone(), msg, sql.as_deref())
        })?;
        let sql = parsed.sql.as_str();
        if sql.len() > MAX_STATEMENT_BYTES {
            // Before the rewriter reads it: the text is the cost.
            let msg = format!(
                "statement too long ({} bytes, at most {MAX_STATEMENT_BYTES}); use parameters",
                sql.len()
            );
            return Err(StorageDenial::with(
                ErrorCode::InvalidParams,
                msg.clone(),
                msg,
                Some(sql),
            ));
        }
        let prefix = storage_prefix(&client.plugin);
        let rewritten = self
            .cache
            .get_or_rewrite(&prefix, sql)
            .map_err(|e| match e {
                RewriteError::Denied(reason) => StorageDenial::denied(reason, Some(sql)),
                RewriteError::Invalid(msg) => {
                    StorageDenial::with(ErrorCode::InvalidParams, msg.clone(), msg, Some(sql))
                }
            })?;
        if method == StorageMethod::Query && rewritten.kind != StatementKind::Read {
            return Err(StorageDenial::denied(
                "kaged.storage.query only runs read-only statements (SELECT, WITH ... SELECT, VALUES)",
                Some(sql),
            ));
        }
        if let Some(other) = rewritten
            .objects
            .iter()
            .find(|o| !self.owners.may_use(&client.plugin, o))
        {
            // The spec's prefix is not injective (`foo`'s `bar_x` is
            // `foo-bar`'s `x`): the registry says whose a name is. Refuse
            // before SQLite can answer anything, -32003 like every denial;
            // the answer names no owner (the audit does).
            let owner = self.owners.owner(other).unwrap_or_default();
            return Err(StorageDenial::not_own(
                &unprefix(other, &prefix),
                format!("`{other}` is registered to plugin {owner}"),
                Some(sql),
            ));
        }
        let db = self.plugin_db(&client.plugin).map_err(internal)?;
        let (write_budget, write_wait) = self.write_budgets();
        let env = ExecEnv {
            db: &db,
            owners: &self.owners,
            budget: match method {
                StorageMethod::Query => self.time_budget,
                _ => write_budget,
            },
            writes: &self.writes,
            write_wait,
            sql,
        };
        let conn = lock(&db.conn);
        match method {
            StorageMethod::Query => query(&env, &conn, &rewritten, &parsed.params),
            _ => exec(&env, &conn, &rewritten, &parsed.params),
        }
    }

    /// The plugin's tables, unprefixed and sorted.
    pub fn tables(&self, plugin: &str) -> Result<Vec<String>, BrokerError> {
        let prefix = storage_prefix(plugin);
        let admin = lock(&self.admin);
        let mut stmt = admin.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
        let names = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        let mut tables: Vec<String> = names
            .into_iter()
            .filter(|n| {
                n.to_ascii_lowercase().starts_with(&prefix)
                    && self.owners.owner(n).as_deref() == Some(plugin)
            })
            .map(|n| n[prefix.len()..].to_owned())
            .collect();
        tables.sort();
        Ok(tables)
    }

    /// Drop every object (tables, views, indexes, triggers) of `plugin`:
    /// the objects the owner registry gives it (with any prefix: a plugin
    /// stranded under the old one by `migrate.rs` loses those too).
    /// Returns the dropped (prefixed) names, in drop order.
    pub fn uninstall(&self, plugin: &str) -> Result<Vec<String>, BrokerError> {
        Ok(self
            .uninstall_objects(plugin)?
            .into_iter()
            .map(|o| o.name)
            .collect())
    }

    /// [`uninstall`](StorageBroker::uninstall), telling the kind of each
    /// dropped object (triggers, then views, indexes and tables), all in
    /// one transaction: either everything goes or nothing does.
    pub fn uninstall_objects(&self, plugin: &str) -> Result<Vec<StorageObject>, BrokerError> {
        if !is_plugin_name(plugin) {
            return Err(BrokerError::InvalidPluginName(plugin.to_owned()));
        }
        let removed = lock(&self.plugins).remove(plugin);
        if let Some(db) = removed {
            drop(lock(&db.conn)); // wait for a call in flight
        }
        let admin = lock(&self.admin);
        // In turn with the plugins' writes; past the wait, SQLite's busy
        // timeout still applies.
        let _turn = self.writes.enter(self.write_budgets().1);
        admin.execute_batch("BEGIN IMMEDIATE")?;
        let result = (|| -> Result<Vec<StorageObject>, BrokerError> {
            let mut stmt = admin.prepare("SELECT type, name FROM sqlite_master")?;
            let objects = stmt
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
                .collect::<Result<Vec<_>, _>>()?;
            let mut dropped = Vec::new();
            for kind in ["trigger", "view", "index", "table"] {
                for (_, name) in objects.iter().filter(|(t, _)| t == kind) {
                    if self.owners.owner(name).as_deref() == Some(plugin) {
                        admin.execute_batch(&format!(
                            "DROP {} IF EXISTS {}",
                            kind.to_uppercase(),
                            quoted(name)
                        ))?;
                        dropped.push(StorageObject {
                            kind: kind.to_owned(),
                            name: name.clone(),
                        });
                    }
                }
            }
            admin.execute(
                &format!("DELETE FROM {OWNERS_TABLE} WHERE plugin = ?1"),
                [plugin],
            )?;
            Ok(dropped)
        })();
        match result {
            Ok(dropped) => {
                admin.execute_batch("COMMIT")?;
                for name in self.owners.objects_of(plugin) {
                    self.owners.remove(&name);
                }
                Ok(dropped)
            }
            Err(e) => {
                let _ = admin.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }
}

/// One object of a plugin's schema, as the broker's catalogue names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageObject {
    /// `table`, `view`, `index` or `trigger`.
    pub kind: String,
    /// The prefixed name (`plugin_oh_my_pi_presets`).
    pub name: String,
}

fn internal(e: BrokerError) -> StorageDenial {
    StorageDenial::with(
        ErrorCode::InternalError,
        "storage is unavailable",
        e.to_string(),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn broker_is_send_and_sync() {
        assert_send_sync::<StorageBroker>();
    }
}
