//! The per-plugin storage quota: how much of the shared database file one
//! plugin's tables and indexes may occupy.
//!
//! # What is measured
//!
//! A plugin's usage is the number of database pages of its own b-trees
//! (its tables, their indexes and auto-indexes), plus its schema text (the
//! `CREATE` statements the catalogue keeps for its tables, indexes, views
//! and triggers) rounded up to whole pages, times the page size: what its
//! data really costs the file, overflow pages included, at page
//! granularity (4 KiB by default). A view or a trigger has no b-tree: its
//! text is all it costs, and it is counted (issue 45: views of 1 MB each
//! went past a 1 MiB quota by 80 MiB). It is measured exactly with SQLite's
//! `dbstat` virtual table (compiled into the bundled SQLite:
//! `SQLITE_ENABLE_DBSTAT_VTAB`) when the plugin's connection makes its
//! first write, before and after every schema statement, and before any
//! refusal. Between those, a data statement (`INSERT`, `UPDATE`, `DELETE`)
//! is charged the change of the file's *used pages* (`page_count` −
//! `freelist_count`) inside its transaction, which holds the database's
//! write lock: only the plugin's own b-trees can change then (wherever
//! their pages come from, the free list or the end of the file), so that
//! is the plugin's growth, for one cached pragma query before and after
//! instead of a walk over its data. (One shared b-tree can change in a
//! data statement: `sqlite_sequence`, by a row for a new `AUTOINCREMENT`
//! table; its rare page is charged to the plugin until the next exact
//! measure.)
//!
//! A refusal never depends on other plugins' objects: it is decided on the
//! exact measure of the plugin's own pages, and its words do not say which
//! of the two limits below stopped the statement.
//!
//! # How it is enforced
//!
//! * Before the statement, the connection's `max_page_count` is lowered to
//!   the file's size plus the plugin's remaining quota (and a little slack
//!   for b-tree rebalancing), so even a runaway `INSERT ... SELECT` stops
//!   with `SQLITE_FULL` long before it could fill the disk.
//! * After it, still inside the transaction, a growth that brings the
//!   plugin's usage over its quota rolls the statement back.
//!
//! * A schema statement whose text would take the plugin's schema text
//!   past [`MAX_SCHEMA_BYTES`] is rolled back too.
//!
//! Either way the plugin gets `-32003` with a message naming the limit
//! ([`QuotaExceeded`]), audited as `plugin.storage_denied` with reason
//! `quota`. A statement that does not grow the plugin's pages (a `DELETE`,
//! a `DROP TABLE`, an `UPDATE` in place, any `query`) always runs, so a
//! plugin over its quota can still read and clean up.

use rusqlite::Connection;

use super::limits::MAX_SCHEMA_BYTES;

/// The default quota per plugin: 64 MiB. Plugin state (settings, caches,
/// indexes of a few thousand documents) fits many times over, while a
/// host with dozens of plugins keeps its shared database to a few GiB at
/// worst. Operators change it with `--storage-quota BYTES`.
pub const DEFAULT_STORAGE_QUOTA: u64 = 64 * 1024 * 1024;

/// Pages one statement may allocate past the quota for a moment (b-tree
/// rebalancing allocates before it frees) before SQLite stops it; the
/// exact check after the statement still applies.
const SLACK_PAGES: i64 = 256;

/// A write refused because it would take the plugin past its quota (or
/// its schema text past [`MAX_SCHEMA_BYTES`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{limit} of {quota} bytes exceeded for plugin {plugin}: {detail}")]
pub struct QuotaExceeded {
    /// Which limit: `storage quota`, or `storage schema text limit`.
    pub limit: &'static str,
    /// The limit, in bytes.
    pub quota: u64,
    /// The plugin.
    pub plugin: String,
    /// The plugin's usage and what is left.
    pub detail: String,
}

/// The quota settings and file geometry of one plugin connection.
#[derive(Debug, Clone, Copy)]
pub(super) struct Meter {
    /// The quota, in bytes.
    pub(super) quota: u64,
    page_size: i64,
    /// `max_page_count` as the connection opened, restored after each call.
    max_page_count: i64,
}

fn pragma(conn: &Connection, name: &str) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, name, |r| r.get(0))
}

fn btree_pages(conn: &Connection, name: &str) -> rusqlite::Result<i64> {
    let mut stmt = conn.prepare_cached("SELECT count(*) FROM dbstat WHERE name = ?1")?;
    stmt.query_row([name], |r| r.get(0))
}

/// The bytes of SQL text the catalogue keeps for the objects on the tables
/// `owns` accepts (a view's table is itself; a trigger's and an index's,
/// the table they are on).
fn schema_text(conn: &Connection, owns: impl Fn(&str) -> bool) -> rusqlite::Result<i64> {
    let mut stmt = conn.prepare_cached(
        "SELECT tbl_name, length(CAST(sql AS BLOB)) FROM sqlite_master WHERE sql IS NOT NULL",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    let mut bytes = 0i64;
    for row in rows {
        let (table, len) = row?;
        if owns(&table) {
            bytes = bytes.saturating_add(len);
        }
    }
    Ok(bytes)
}

/// Pages in use in the file: `page_count` − `freelist_count`.
fn used_pages(conn: &Connection) -> rusqlite::Result<i64> {
    let mut stmt = conn.prepare_cached(
        "SELECT (SELECT page_count FROM pragma_page_count()) - (SELECT freelist_count FROM pragma_freelist_count())",
    )?;
    stmt.query_row([], |r| r.get(0))
}

/// Where a statement started (see [`Meter::begin`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Start {
    /// The plugin's usage in pages before the statement.
    usage: i64,
    /// The file's used pages before a data statement; `None` for a schema
    /// statement, measured exactly on both sides instead.
    used: Option<i64>,
    /// The plugin's schema text in bytes before a schema statement.
    text: i64,
}

impl Start {
    /// The plugin's usage in pages before the statement.
    pub(super) fn usage(&self) -> i64 {
        self.usage
    }
}

impl Meter {
    /// The meter of a fresh connection (run while the authorizer allows
    /// the broker's own SQL).
    pub(super) fn new(conn: &Connection, quota: u64) -> rusqlite::Result<Meter> {
        Ok(Meter {
            quota,
            page_size: pragma(conn, "page_size")?.max(1),
            max_page_count: pragma(conn, "max_page_count")?,
        })
    }

    fn quota_pages(&self) -> i64 {
        i64::try_from(self.quota / self.page_size.unsigned_abs()).unwrap_or(i64::MAX)
    }

    /// Bytes of `pages` pages.
    pub(super) fn bytes(&self, pages: i64) -> u64 {
        pages
            .max(0)
            .unsigned_abs()
            .saturating_mul(self.page_size.unsigned_abs())
    }

    /// The plugin's usage in pages, measured from scratch: the pages
    /// (`dbstat`) of every table and index whose table satisfies `owns`,
    /// and its schema text rounded up to pages.
    pub(super) fn measure(
        &self,
        conn: &Connection,
        owns: impl Fn(&str) -> bool,
    ) -> rusqlite::Result<i64> {
        Ok(self.measure_with_text(conn, owns)?.0)
    }

    /// [`Meter::measure`], and the schema text in bytes.
    fn measure_with_text(
        &self,
        conn: &Connection,
        owns: impl Fn(&str) -> bool,
    ) -> rusqlite::Result<(i64, i64)> {
        let text = schema_text(conn, &owns)?;
        let page = self.page_size.max(1);
        let mut pages = (text + page - 1) / page;
        let mut stmt = conn.prepare(
            "SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index') AND rootpage > 0",
        )?;
        let btrees = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        for (name, _) in btrees.iter().filter(|(_, t)| owns(t)) {
            pages += btree_pages(conn, name)?;
        }
        Ok((pages, text))
    }

    /// Before a writing statement by a plugin whose usage is `usage`
    /// pages (`None`: not known, measure it): set the connection's page
    /// limit to what the plugin may still grow, and note where it started.
    /// A schema statement (`exact`) is measured with `dbstat` on both sides.
    pub(super) fn begin(
        &self,
        conn: &Connection,
        usage: Option<i64>,
        exact: bool,
        owns: impl Fn(&str) -> bool,
    ) -> rusqlite::Result<Start> {
        let (usage, text) = match usage {
            Some(pages) if !exact => (pages, 0),
            _ => self.measure_with_text(conn, owns)?,
        };
        let remaining = (self.quota_pages() - usage).max(0);
        let limit = pragma(conn, "page_count")?
            .saturating_add(remaining)
            .saturating_add(SLACK_PAGES)
            .min(self.max_page_count);
        conn.pragma_update(None, "max_page_count", limit)?;
        let used = if exact { None } else { Some(used_pages(conn)?) };
        Ok(Start { usage, used, text })
    }

    /// Put the connection's page limit back (after every statement begun).
    pub(super) fn end(&self, conn: &Connection) -> rusqlite::Result<()> {
        conn.pragma_update(None, "max_page_count", self.max_page_count)
    }

    /// After the statement, inside its transaction: the plugin's new usage
    /// in pages, or why it is refused with its usage before the statement.
    /// A refusal is decided on an exact measure, so a usage gone stale
    /// (another process changed the file) never refuses a write that fits.
    pub(super) fn check(
        &self,
        conn: &Connection,
        plugin: &str,
        start: Start,
        owns: impl Fn(&str) -> bool,
    ) -> rusqlite::Result<Result<i64, (QuotaExceeded, i64)>> {
        let quota = self.quota_pages();
        let (after, grown) = match start.used {
            Some(used) => {
                let grown = used_pages(conn)? - used;
                let after = start.usage + grown;
                if grown <= 0 || after <= quota {
                    return Ok(Ok(after.max(0)));
                }
                (self.measure(conn, owns)?, grown)
            }
            None => {
                let (after, text) = self.measure_with_text(conn, owns)?;
                if text > start.text && text.unsigned_abs() > MAX_SCHEMA_BYTES {
                    return Ok(Err((self.schema_exceeded(plugin, start.text), start.usage)));
                }
                (after, after - start.usage)
            }
        };
        if grown <= 0 || after <= quota {
            return Ok(Ok(after));
        }
        let usage = after - grown;
        Ok(Err((self.exceeded(plugin, usage), usage)))
    }

    /// The refusal of a statement by a plugin that used `usage` pages
    /// before it: the same words whether SQLite stopped it at the page
    /// limit or the check after it did (which of the two happens depends on
    /// the file's free pages, which other plugins' deletes make).
    pub(super) fn exceeded(&self, plugin: &str, usage: i64) -> QuotaExceeded {
        QuotaExceeded {
            limit: "storage quota",
            quota: self.quota,
            plugin: plugin.to_owned(),
            detail: format!(
                "{} bytes used, {} bytes left, and the statement needs more; delete rows or drop tables to make room",
                self.bytes(usage),
                self.bytes(self.quota_pages() - usage)
            ),
        }
    }

    /// The refusal of a schema statement that would take the plugin's
    /// schema text, `text` bytes before it, past [`MAX_SCHEMA_BYTES`].
    fn schema_exceeded(&self, plugin: &str, text: i64) -> QuotaExceeded {
        QuotaExceeded {
            limit: "storage schema text limit",
            quota: MAX_SCHEMA_BYTES,
            plugin: plugin.to_owned(),
            detail: format!(
                "its tables, indexes, views and triggers hold {} bytes of SQL text, and the statement adds more; drop views or triggers to make room",
                text.max(0)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_pages_are_measured_and_used_pages_follow_the_file() {
        let conn = Connection::open_in_memory().expect("open");
        conn.execute_batch("CREATE TABLE a (x); CREATE TABLE b (x); CREATE INDEX a_x ON a (x)")
            .expect("create");
        let meter = Meter::new(&conn, 1 << 20).expect("meter");
        // `a` and its index, one root page each, and their 43 bytes of
        // schema text, one page; `b` is someone else's.
        assert_eq!(meter.measure(&conn, |t| t == "a").expect("measure"), 3);
        let used = used_pages(&conn).expect("used");
        conn.execute_batch("INSERT INTO a VALUES (zeroblob(10000))")
            .expect("insert");
        let grown = used_pages(&conn).expect("used") - used;
        assert_eq!(
            grown,
            meter.measure(&conn, |t| t == "a").expect("measure") - 3
        );
        assert!(grown >= 2, "{grown}");
        assert_eq!(meter.bytes(2), 2 * 4096);
    }

    #[test]
    fn a_view_costs_its_text() {
        let conn = Connection::open_in_memory().expect("open");
        let meter = Meter::new(&conn, 1 << 20).expect("meter");
        let body = "x".repeat(10_000);
        conn.execute_batch(&format!("CREATE VIEW v AS SELECT '{body}' AS a"))
            .expect("view");
        // No b-tree: 10 025 bytes of text, three pages.
        assert_eq!(meter.measure(&conn, |t| t == "v").expect("measure"), 3);
        assert_eq!(
            schema_text(&conn, |t| t == "v").expect("text"),
            10_000 + "CREATE VIEW v AS SELECT '' AS a".len() as i64
        );
        assert_eq!(meter.measure(&conn, |t| t == "w").expect("measure"), 0);
    }
}
