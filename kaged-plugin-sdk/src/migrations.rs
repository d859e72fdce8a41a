//! Schema migrations on brokered storage: the place to create a plugin's
//! tables.
//!
//! A plugin lists its schema as numbered steps (step 1 is the first
//! statement, step 2 the next...), and the SDK runs the steps it has not run
//! yet once per process, right after `initialized` (the first moment the
//! plugin may call the host, ADDENDUM §12), before any method, tool or hook
//! handler runs: calls that arrive meanwhile wait for it. The version
//! reached is kept in a table of the plugin's own,
//! [`VERSION_TABLE`](Migrations::VERSION_TABLE), so each step runs once per
//! store, not once per start. Add steps at the end; never edit one that has
//! shipped.
//!
//! Each step is one statement and each is its own transaction (the host
//! runs every `exec` alone), so a process killed between a step and its
//! version update runs that step again at the next start: write steps that
//! can (`CREATE TABLE IF NOT EXISTS`, `CREATE INDEX IF NOT EXISTS`).
//!
//! When a step fails, every call that needed the schema is answered with
//! the failure (`-32000`, naming the step), and the plugin keeps serving.
//!
//! ```
//! use kaged_plugin_sdk::{plugin, Migrations};
//! let plugin = plugin!("notes")
//!     .capability_used("kaged:storage:read")
//!     .capability_used("kaged:storage:write")
//!     .migrations(Migrations::new([
//!         "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)",
//!         "CREATE INDEX IF NOT EXISTS notes_text ON notes (text)",
//!     ]))
//!     .build()
//!     .expect("valid");
//! # let _ = plugin;
//! ```

use std::sync::Arc;

use crate::error::PluginError;
use crate::runtime::PluginBuilder;
use crate::sql_params;
use crate::storage::{Storage, StorageError};

/// A plugin's schema as numbered steps; see the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrations {
    steps: Vec<String>,
}

/// A step that failed.
#[derive(Debug, thiserror::Error)]
#[error("schema migration step {step} of {total} failed ({statement})")]
pub struct MigrationError {
    /// The step's number (1-based), or 0 for the version table itself.
    pub step: usize,
    /// How many steps there are.
    pub total: usize,
    /// The statement that failed.
    pub statement: String,
    /// Why.
    #[source]
    pub source: StorageError,
}

impl From<MigrationError> for PluginError {
    fn from(e: MigrationError) -> PluginError {
        PluginError::from_error(&e)
    }
}

impl PluginBuilder {
    /// The plugin's schema on brokered storage: steps run once each, in
    /// order, right after `initialized` and before any handler (see
    /// [`Migrations`]). Needs the `kaged:storage:write` capability.
    pub fn migrations(self, migrations: Migrations) -> Self {
        self.schema_task(Arc::new(move |host| {
            let migrations = migrations.clone();
            Box::pin(async move {
                migrations.run(&host.storage()).await.map_err(|e| {
                    tracing::error!("{}", crate::protocol::error_chain::chain(&e));
                    PluginError::from(e)
                })
            })
        }))
    }
}

impl Migrations {
    /// The table (one of the plugin's own, prefixed like the rest) holding
    /// the number of the last step run.
    pub const VERSION_TABLE: &'static str = "kaged_schema_version";

    /// The steps, in order: the first is step 1.
    pub fn new<I, S>(steps: I) -> Migrations
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Migrations {
            steps: steps.into_iter().map(|s| s.as_ref().to_string()).collect(),
        }
    }

    /// The steps.
    pub fn steps(&self) -> &[String] {
        &self.steps
    }

    /// Run the steps `storage` has not run yet, in order; the version
    /// reached (the number of steps).
    pub async fn run(&self, storage: &Storage) -> Result<usize, MigrationError> {
        let total = self.steps.len();
        let fail = |step: usize, statement: &str| {
            let statement = statement.to_string();
            move |source: StorageError| MigrationError {
                step,
                total,
                statement,
                source,
            }
        };
        let create = format!(
            "CREATE TABLE IF NOT EXISTS {} (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)",
            Self::VERSION_TABLE
        );
        storage
            .exec(&create, sql_params![])
            .await
            .map_err(fail(0, &create))?;
        let read = format!("SELECT version FROM {} WHERE id = 1", Self::VERSION_TABLE);
        let rows: Vec<Version> = storage
            .query_as(&read, sql_params![])
            .await
            .map_err(fail(0, &read))?;
        let done = rows
            .first()
            .map_or(0, |r| usize::try_from(r.version).unwrap_or(0));
        let record = format!(
            "INSERT INTO {} (id, version) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version",
            Self::VERSION_TABLE
        );
        for (i, statement) in self.steps.iter().enumerate().skip(done) {
            let step = i + 1;
            storage
                .exec(statement, sql_params![])
                .await
                .map_err(fail(step, statement))?;
            storage
                .exec(&record, sql_params![step as i64])
                .await
                .map_err(fail(step, &record))?;
        }
        Ok(total.max(done))
    }
}

#[derive(serde::Deserialize)]
struct Version {
    version: i64,
}
