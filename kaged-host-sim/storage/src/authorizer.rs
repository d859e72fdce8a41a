//! Defence in depth: a SQLite authorizer on every plugin connection.
//!
//! The rewriter is the first line; this is the second. Each plugin has its
//! own [`rusqlite::Connection`] with an authorizer bound to an
//! [`AuthPolicy`], which SQLite consults while *preparing* every statement
//! (including statements re-prepared after a schema change, view bodies and
//! trigger bodies, which it reports with the underlying table names). So
//! even SQL that bypassed the rewriter can only reach objects that
//!
//! * live in the `main` database (never `temp`, never an attached one),
//! * carry the plugin's prefix (ASCII-case-insensitively), and
//! * are not registered to another plugin in the [`Owners`] registry
//!   (prefixes are injective, so this only matters for a registry out of
//!   step with the names, e.g. a legacy object left unmigrated).
//!
//! What is allowed also depends on the [`Phase`] the broker sets around
//! each call: nothing while idle, reads for `query`, writes for DML, and
//! for DDL additionally the catalogue accesses SQLite makes internally
//! (`sqlite_master`/`sqlite_schema`/`sqlite_temp_master`, `sqlite_sequence`,
//! auto-indexes of the plugin's tables, the internal `sqlite_rename_*` and
//! `sqlite_drop_column` functions). `ATTACH`, `DETACH`, `PRAGMA`, `ANALYZE`,
//! virtual tables, TEMP objects, savepoints and denied functions are always
//! refused; transaction control only in the broker's own phase.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::Connection;

use super::rewrite::is_denied_function;

/// What the connection is currently allowed to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Phase {
    /// No call in progress: everything is denied.
    Closed = 0,
    /// The broker's own fixed SQL (transaction control, registry upkeep):
    /// everything is allowed. Plugin SQL never runs in this phase.
    Broker = 1,
    /// A `query`: reads of the plugin's objects.
    Read = 2,
    /// DML: reads and writes of the plugin's objects.
    Write = 3,
    /// DDL: reads, writes, schema changes of the plugin's objects, and the
    /// catalogue accesses SQLite makes to carry them out.
    Schema = 4,
}

impl Phase {
    fn from_u8(v: u8) -> Phase {
        match v {
            1 => Phase::Broker,
            2 => Phase::Read,
            3 => Phase::Write,
            4 => Phase::Schema,
            _ => Phase::Closed,
        }
    }
}

/// The broker's own table (outside every plugin prefix) that keeps the
/// [`Owners`] registry: which plugin created which prefixed object.
pub(super) const OWNERS_TABLE: &str = "kaged_storage_owners";

/// The registry of which plugin created which prefixed object (lowercase
/// object name to plugin name), shared by all connections of a broker.
#[derive(Debug, Default)]
pub struct Owners(RwLock<HashMap<String, String>>);

impl Owners {
    /// The plugin that owns `object` (any case), if registered.
    pub fn owner(&self, object: &str) -> Option<String> {
        let map = self.0.read().unwrap_or_else(|e| e.into_inner());
        map.get(&object.to_ascii_lowercase()).cloned()
    }

    /// Whether `plugin` may use `object`: unregistered, or registered to it.
    pub fn may_use(&self, plugin: &str, object: &str) -> bool {
        let map = self.0.read().unwrap_or_else(|e| e.into_inner());
        map.get(&object.to_ascii_lowercase())
            .is_none_or(|o| o == plugin)
    }

    /// Register `object` to `plugin`.
    pub fn insert(&self, object: &str, plugin: &str) {
        let mut map = self.0.write().unwrap_or_else(|e| e.into_inner());
        map.insert(object.to_ascii_lowercase(), plugin.to_owned());
    }

    /// Forget `object`.
    pub fn remove(&self, object: &str) {
        let mut map = self.0.write().unwrap_or_else(|e| e.into_inner());
        map.remove(&object.to_ascii_lowercase());
    }

    /// Every object registered to `plugin` (lowercase names).
    pub fn objects_of(&self, plugin: &str) -> Vec<String> {
        let map = self.0.read().unwrap_or_else(|e| e.into_inner());
        map.iter()
            .filter(|(_, p)| *p == plugin)
            .map(|(n, _)| n.clone())
            .collect()
    }
}

/// The authorization policy of one plugin connection.
#[derive(Debug)]
pub struct AuthPolicy {
    plugin: String,
    prefix: String,
    phase: AtomicU8,
    deadline: Mutex<Option<Instant>>,
    owners: Arc<Owners>,
}

/// Catalogue tables SQLite reads and writes itself during DDL.
const CATALOGUE: [&str; 5] = [
    "sqlite_master",
    "sqlite_schema",
    "sqlite_temp_master",
    "sqlite_temp_schema",
    "sqlite_sequence",
];

/// Internal functions SQLite calls itself during `ALTER TABLE` (they cannot
/// be called from SQL text, and the rewriter refuses `sqlite_*` anyway).
const INTERNAL_DDL_FUNCTIONS: [&str; 5] = [
    "sqlite_rename_table",
    "sqlite_rename_column",
    "sqlite_rename_test",
    "sqlite_rename_quotefix",
    "sqlite_drop_column",
];

impl AuthPolicy {
    /// A policy for `plugin` (whose prefix is `prefix`), starting [`Phase::Closed`].
    pub fn new(plugin: &str, prefix: &str, owners: Arc<Owners>) -> AuthPolicy {
        AuthPolicy {
            plugin: plugin.to_owned(),
            prefix: prefix.to_ascii_lowercase(),
            phase: AtomicU8::new(Phase::Closed as u8),
            deadline: Mutex::new(None),
            owners,
        }
    }

    /// Switch phase.
    pub fn set_phase(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::SeqCst);
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        Phase::from_u8(self.phase.load(Ordering::SeqCst))
    }

    /// Set (or clear) the instant after which running statements are interrupted.
    pub fn set_deadline(&self, deadline: Option<Instant>) {
        *self.deadline.lock().unwrap_or_else(|e| e.into_inner()) = deadline;
    }

    /// Whether the deadline has passed.
    pub fn deadline_passed(&self) -> bool {
        self.deadline
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|d| Instant::now() >= d)
    }

    /// Whether `name` is one of this plugin's objects.
    pub fn owns(&self, name: &str) -> bool {
        name.to_ascii_lowercase().starts_with(&self.prefix)
            && self.owners.may_use(&self.plugin, name)
    }

    fn main_db(ctx: &AuthContext<'_>) -> bool {
        matches!(ctx.database_name, None | Some("main"))
    }

    fn catalogue(&self, ctx: &AuthContext<'_>, name: &str) -> bool {
        self.phase() == Phase::Schema
            && matches!(ctx.database_name, None | Some("main") | Some("temp"))
            && CATALOGUE.contains(&name.to_ascii_lowercase().as_str())
    }

    /// Decide one authorizer callback.
    pub fn decide(&self, ctx: &AuthContext<'_>) -> Authorization {
        let phase = self.phase();
        if phase == Phase::Broker {
            return Authorization::Allow;
        }
        if phase == Phase::Closed {
            return Authorization::Deny;
        }
        let own = |name: &str| Self::main_db(ctx) && self.owns(name);
        let writes = phase >= Phase::Write;
        let ddl = phase == Phase::Schema;
        let allow = match ctx.action {
            AuthAction::Select | AuthAction::Recursive => true,
            AuthAction::Read {
                table_name,
                column_name,
            } => {
                own(table_name)
                    || self.catalogue(ctx, table_name)
                    || (column_name.is_empty()
                        && ctx.database_name.is_none()
                        && !is_database_namespace(table_name))
            }
            AuthAction::Function { function_name } => {
                !is_denied_function(function_name)
                    || (ddl
                        && INTERNAL_DDL_FUNCTIONS
                            .contains(&function_name.to_ascii_lowercase().as_str()))
            }
            AuthAction::Insert { table_name }
            | AuthAction::Update { table_name, .. }
            | AuthAction::Delete { table_name } => {
                writes && (own(table_name) || self.catalogue(ctx, table_name))
            }
            AuthAction::CreateTable { table_name } => {
                ddl && (own(table_name) || table_name.eq_ignore_ascii_case("sqlite_sequence"))
            }
            AuthAction::CreateIndex {
                index_name,
                table_name,
            } => {
                let auto = index_name
                    .to_ascii_lowercase()
                    .starts_with("sqlite_autoindex_");
                ddl && own(table_name) && (auto || own(index_name))
            }
            AuthAction::CreateView { view_name } => ddl && own(view_name),
            AuthAction::CreateTrigger {
                trigger_name,
                table_name,
            } => ddl && own(trigger_name) && own(table_name),
            AuthAction::DropTable { table_name } => ddl && own(table_name),
            AuthAction::DropView { view_name } => ddl && own(view_name),
            AuthAction::DropIndex {
                index_name,
                table_name,
            } => ddl && own(index_name) && own(table_name),
            AuthAction::DropTrigger {
                trigger_name,
                table_name,
            } => ddl && own(trigger_name) && own(table_name),
            AuthAction::AlterTable { table_name, .. } => ddl && self.owns(table_name),
            AuthAction::Reindex { index_name } => ddl && own(index_name),
            // TEMP objects, ATTACH/DETACH, PRAGMA, ANALYZE, virtual tables,
            // transactions and savepoints from plugin SQL, unknown codes.
            _ => false,
        };
        if allow {
            Authorization::Allow
        } else {
            Authorization::Deny
        }
    }
}

/// Whether `name` lies in a namespace that real tables of the database use:
/// plugins' objects (`plugin_`), SQLite's (`sqlite_`), table-valued pragmas
/// (`pragma_`), the broker's own (`kaged_`), and `dbstat` (the page
/// census the quota uses, `quota.rs`).
///
/// SQLite reports a FROM item none of whose columns is used (`SELECT
/// count(*) FROM x`) as a read of column `""` with no database, for tables
/// and CTEs alike; such a read is allowed for a CTE name, which the rewriter
/// never lets into these namespaces, and refused for anything that could
/// be a real table of someone else.
fn is_database_namespace(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "dbstat"
        || ["plugin_", "sqlite_", "pragma_", "kaged_"]
            .iter()
            .any(|p| lower.starts_with(p))
}

/// Install `policy` as the authorizer of `conn`, and a progress handler
/// that interrupts statements running past the policy's deadline.
pub fn install(conn: &mut Connection, policy: Arc<AuthPolicy>) -> rusqlite::Result<()> {
    let auth = Arc::clone(&policy);
    conn.authorizer(Some(move |ctx: AuthContext<'_>| auth.decide(&ctx)))?;
    conn.progress_handler(10_000, Some(move || policy.deadline_passed()))?;
    Ok(())
}
