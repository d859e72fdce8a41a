//! The installed catalogue, in the host's brokered storage (`kaged.storage.*`
//! through the SDK's typed client). Tables, created on first use:
//!
//! * `presets`: one row per installed preset (`tags` as `,a,b,`,
//!   `settings` as JSON text);
//! * `history`: every install, update and uninstall, written by triggers
//!   on `presets` in the same transaction as the change; its `revision`
//!   (the row id) is the catalogue's revision.
//!
//! The plugin never sees its storage prefix: the host rewrites `presets`
//! to `plugin_oh_my_pi_presets`.

use std::sync::atomic::{AtomicBool, Ordering};

use kaged_plugin_sdk::storage::{Storage, StorageError};
use kaged_plugin_sdk::{sql_params, PluginError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::preset::{decode_tags, encode_tags, PresetSpec};

/// The schema, one statement per storage call, all idempotent.
pub const SCHEMA: [&str; 6] = [
    "CREATE TABLE IF NOT EXISTS presets (name TEXT PRIMARY KEY, version TEXT NOT NULL, \
     description TEXT NOT NULL, tags TEXT NOT NULL, settings TEXT NOT NULL, source TEXT NOT NULL, \
     installed_at TEXT NOT NULL, updated_at TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS history (revision INTEGER PRIMARY KEY, name TEXT NOT NULL, \
     action TEXT NOT NULL, version TEXT NOT NULL, at TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS history_by_name ON history (name, revision)",
    "CREATE TRIGGER IF NOT EXISTS presets_installed AFTER INSERT ON presets BEGIN \
     INSERT INTO history (name, action, version, at) VALUES (new.name, 'installed', new.version, new.updated_at); END",
    "CREATE TRIGGER IF NOT EXISTS presets_updated AFTER UPDATE ON presets BEGIN \
     INSERT INTO history (name, action, version, at) VALUES (new.name, 'updated', new.version, new.updated_at); END",
    "CREATE TRIGGER IF NOT EXISTS presets_uninstalled AFTER DELETE ON presets BEGIN \
     INSERT INTO history (name, action, version, at) \
     VALUES (old.name, 'uninstalled', old.version, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')); END",
];

const COLUMNS: &str = "name, version, description, tags, source, installed_at, updated_at";

/// An installed preset, as `presets.list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Installed {
    /// The preset's name.
    pub name: String,
    /// The installed version.
    pub version: String,
    /// Its description.
    pub description: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// Where it came from: the preset file, or `inline`.
    pub source: String,
    /// When it was first installed (RFC 3339).
    pub installed_at: String,
    /// When it was last installed or updated (RFC 3339).
    pub updated_at: String,
}

/// A `presets` row, as the broker answers it (typed with `query_as`).
#[derive(Debug, Deserialize)]
struct Row {
    name: String,
    version: String,
    description: String,
    tags: String,
    source: String,
    installed_at: String,
    updated_at: String,
}

impl From<Row> for Installed {
    fn from(r: Row) -> Installed {
        Installed {
            name: r.name,
            version: r.version,
            description: r.description,
            tags: decode_tags(&r.tags),
            source: r.source,
            installed_at: r.installed_at,
            updated_at: r.updated_at,
        }
    }
}

/// One `history` row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// The catalogue revision this change made.
    pub revision: i64,
    /// `installed`, `updated` or `uninstalled`.
    pub action: String,
    /// The version installed, updated to, or removed.
    pub version: String,
    /// When (RFC 3339).
    pub at: String,
}

#[derive(Deserialize)]
struct Number {
    n: i64,
}

#[derive(Deserialize)]
struct Settings {
    settings: String,
}

/// `s` as a `LIKE` pattern matching it anywhere (escape character `!`).
pub fn contains_pattern(s: &str) -> String {
    let mut p = String::from("%");
    for c in s.chars() {
        if matches!(c, '%' | '_' | '!') {
            p.push('!');
        }
        p.push(c);
    }
    p.push('%');
    p
}

/// The catalogue's storage operations. Remembers whether the schema has
/// been created in this process (created again after a `no such table`).
#[derive(Debug, Default)]
pub struct Catalogue {
    ready: AtomicBool,
}

impl Catalogue {
    /// A storage error as the plugin's answer: `-32000` with
    /// `data.error` `storage_unavailable` (the host refused: no storage
    /// capability, or no storage on this host) or `storage_failed`.
    pub fn storage_error(&self, e: StorageError) -> PluginError {
        let message = e
            .rpc()
            .map(|r| r.message.clone())
            .unwrap_or_else(|| e.to_string());
        if message.contains("no such table") {
            // Dropped under us (an uninstall): recreate on the next call.
            self.ready.store(false, Ordering::SeqCst);
        }
        let (kind, text) = match e {
            StorageError::Denied(_) => (
                "storage_unavailable",
                format!("storage_unavailable: the host refused oh-my-pi's catalogue storage ({message}); oh-my-pi needs a host with storage and the kaged:storage:read and kaged:storage:write capabilities"),
            ),
            _ => ("storage_failed", format!("storage_failed: the catalogue storage failed: {message}")),
        };
        PluginError::new(text).with_data(json!({"error": kind, "cause": message}))
    }

    /// Create the tables and triggers unless this process already did.
    pub async fn ensure(&self, s: &Storage) -> Result<(), PluginError> {
        if self.ready.load(Ordering::SeqCst) {
            return Ok(());
        }
        for sql in SCHEMA {
            s.exec(sql, sql_params![])
                .await
                .map_err(|e| self.storage_error(e))?;
        }
        self.ready.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// The installed preset `name`, with its settings.
    pub async fn get(
        &self,
        s: &Storage,
        name: &str,
    ) -> Result<Option<(Installed, Map<String, Value>)>, PluginError> {
        self.ensure(s).await?;
        let sql = format!("SELECT {COLUMNS} FROM presets WHERE name = ?");
        let rows: Vec<Row> = s
            .query_as(&sql, sql_params![name])
            .await
            .map_err(|e| self.storage_error(e))?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        let settings: Vec<Settings> = s
            .query_as(
                "SELECT settings FROM presets WHERE name = ?",
                sql_params![name],
            )
            .await
            .map_err(|e| self.storage_error(e))?;
        let settings = settings
            .into_iter()
            .next()
            .and_then(|r| serde_json::from_str(&r.settings).ok())
            .unwrap_or_default();
        Ok(Some((row.into(), settings)))
    }

    /// Installed presets whose name contains `filter` and that carry `tag`,
    /// by name.
    pub async fn list(
        &self,
        s: &Storage,
        filter: Option<&str>,
        tag: Option<&str>,
    ) -> Result<Vec<Installed>, PluginError> {
        self.ensure(s).await?;
        let sql = format!(
            "SELECT {COLUMNS} FROM presets WHERE name LIKE ? ESCAPE '!' AND (? IS NULL OR tags LIKE ?) ORDER BY name"
        );
        let name = contains_pattern(filter.unwrap_or_default());
        let tag_pattern = tag.map(|t| format!("%,{t},%"));
        let rows: Vec<Row> = s
            .query_as(&sql, sql_params![name, tag_pattern.clone(), tag_pattern])
            .await
            .map_err(|e| self.storage_error(e))?;
        Ok(rows.into_iter().map(Installed::from).collect())
    }

    /// Installed presets matching any of `words` in their name, description
    /// or tags (the candidates of a search; ranking is `search::rank`).
    pub async fn matching(
        &self,
        s: &Storage,
        words: &[String],
    ) -> Result<Vec<Installed>, PluginError> {
        self.ensure(s).await?;
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let one =
            "(name LIKE ? ESCAPE '!' OR description LIKE ? ESCAPE '!' OR tags LIKE ? ESCAPE '!')";
        let sql = format!(
            "SELECT {COLUMNS} FROM presets WHERE {} ORDER BY name",
            vec![one; words.len()].join(" OR ")
        );
        let mut params = Vec::with_capacity(words.len() * 3);
        for w in words {
            let p = contains_pattern(w);
            params.extend(sql_params![p.clone(), p.clone(), p]);
        }
        let rows: Vec<Row> = s
            .query_as(&sql, params)
            .await
            .map_err(|e| self.storage_error(e))?;
        Ok(rows.into_iter().map(Installed::from).collect())
    }

    /// Install or replace `spec` (a checked spec); `Ok(true)` when it was
    /// not installed before. The `history` row is written by a trigger in
    /// the same transaction.
    pub async fn upsert(
        &self,
        s: &Storage,
        spec: &PresetSpec,
        source: &str,
        now: &str,
    ) -> Result<bool, PluginError> {
        self.ensure(s).await?;
        let name = spec.name.clone().unwrap_or_default();
        let before = self.count_named(s, &name).await?;
        let settings = serde_json::to_string(&spec.settings)?;
        s.exec(
            "INSERT INTO presets (name, version, description, tags, settings, source, installed_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET version = excluded.version, \
             description = excluded.description, tags = excluded.tags, settings = excluded.settings, \
             source = excluded.source, updated_at = excluded.updated_at",
            sql_params![
                name,
                spec.version.as_str(),
                spec.description.as_str(),
                encode_tags(&spec.tags),
                settings,
                source,
                now,
                now
            ],
        )
        .await
        .map_err(|e| self.storage_error(e))?;
        Ok(before == 0)
    }

    async fn count_named(&self, s: &Storage, name: &str) -> Result<i64, PluginError> {
        let rows: Vec<Number> = s
            .query_as(
                "SELECT count(name) AS n FROM presets WHERE name = ?",
                sql_params![name],
            )
            .await
            .map_err(|e| self.storage_error(e))?;
        Ok(rows.first().map_or(0, |r| r.n))
    }

    /// Remove `name`; whether it was installed.
    pub async fn remove(&self, s: &Storage, name: &str) -> Result<bool, PluginError> {
        self.ensure(s).await?;
        let done = s
            .exec("DELETE FROM presets WHERE name = ?", sql_params![name])
            .await
            .map_err(|e| self.storage_error(e))?;
        Ok(done.rows_affected > 0)
    }

    /// The catalogue revision: the number of changes ever made (0 when new).
    pub async fn revision(&self, s: &Storage) -> Result<i64, PluginError> {
        self.ensure(s).await?;
        let rows: Vec<Number> = s
            .query_as(
                "SELECT coalesce(max(revision), 0) AS n FROM history",
                sql_params![],
            )
            .await
            .map_err(|e| self.storage_error(e))?;
        Ok(rows.first().map_or(0, |r| r.n))
    }

    /// How many presets are installed.
    pub async fn total(&self, s: &Storage) -> Result<i64, PluginError> {
        self.ensure(s).await?;
        let rows: Vec<Number> = s
            .query_as("SELECT count(name) AS n FROM presets", sql_params![])
            .await
            .map_err(|e| self.storage_error(e))?;
        Ok(rows.first().map_or(0, |r| r.n))
    }

    /// The last `limit` changes of `name`, newest first.
    pub async fn history(
        &self,
        s: &Storage,
        name: &str,
        limit: i64,
    ) -> Result<Vec<HistoryEntry>, PluginError> {
        self.ensure(s).await?;
        s.query_as(
            "SELECT revision, action, version, at FROM history WHERE name = ? ORDER BY revision DESC LIMIT ?",
            sql_params![name, limit],
        )
        .await
        .map_err(|e| self.storage_error(e))
    }
}
