//! The per-plugin storage quota: how much of the shared database file one
//! plugin's tables and indexes may occupy.
//!
//! # What is measured
//!
//! A plugin's usage is the number of database pages of its own b-trees
//! (its tables, their indexes and auto-indexes) times the page size: what
//! its data really costs the file, overflow pages included, at page
//! granularity (4 KiB by default). It is measured exactly once per plugin
//! connection with SQLite's `dbstat` virtual table (compiled into the
//! bundled SQLite: `SQLITE_ENABLE_DBSTAT_VTAB`), then kept up to date by
//! every `exec`: inside the statement's transaction, which holds the
//! database's write lock, the change of *used pages* (`page_count` −
//! `freelist_count`) minus the pages of the b-trees every plugin may grow
//! without owning them (the catalogue, `sqlite_sequence`, the broker's
//! owner registry) is exactly the change of the plugin's own pages, wherever
//! they came from (the free list or the end of the file). That costs two
//! pragmas and a few `dbstat` lookups of small b-trees per `exec`, not a
//! walk over the plugin's data, and it never depends on other plugins'
//! objects, so the quota's answer tells a plugin nothing about them.
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
//! Either way the plugin gets `-32003` with a message naming the quota
//! ([`QuotaExceeded`]), audited as `plugin.storage_denied` with reason
//! `quota`. A statement that does not grow the plugin's pages (a `DELETE`,
//! a `DROP TABLE`, an `UPDATE` in place, any `query`) always runs, so a
//! plugin over its quota can still read and clean up.

use rusqlite::Connection;

use super::authorizer::OWNERS_TABLE;

/// The default quota per plugin: 64 MiB. Plugin state (settings, caches,
/// indexes of a few thousand documents) fits many times over, while a
/// host with dozens of plugins keeps its shared database to a few GiB at
/// worst. Operators change it with `--storage-quota BYTES`.
pub const DEFAULT_STORAGE_QUOTA: u64 = 64 * 1024 * 1024;

/// Pages one statement may allocate past the quota for a moment (b-tree
/// rebalancing allocates before it frees) before SQLite stops it; the
/// exact check after the statement still applies.
const SLACK_PAGES: i64 = 256;

/// B-trees that grow with any plugin's statements but belong to none.
const SHARED_BTREES: [&str; 4] = [
    "sqlite_schema",
    "sqlite_master",
    "sqlite_sequence",
    OWNERS_TABLE,
];

/// A write refused because it would take the plugin past its quota.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("storage quota of {quota} bytes exceeded for plugin {plugin}: {detail}")]
pub struct QuotaExceeded {
    /// The quota, in bytes.
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

/// Pages in use by plugin b-trees (all of them): used pages minus the
/// shared b-trees'.
fn plugin_pages(conn: &Connection) -> rusqlite::Result<i64> {
    let mut used = pragma(conn, "page_count")? - pragma(conn, "freelist_count")?;
    for name in SHARED_BTREES {
        used -= btree_pages(conn, name)?;
    }
    Ok(used)
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

    /// The plugin's usage in pages, measured from scratch with `dbstat`:
    /// every table and index whose table satisfies `owns`.
    pub(super) fn measure(
        &self,
        conn: &Connection,
        owns: impl Fn(&str) -> bool,
    ) -> rusqlite::Result<i64> {
        let mut stmt = conn.prepare(
            "SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index') AND rootpage > 0",
        )?;
        let btrees = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        let mut pages = 0;
        for (name, _) in btrees.iter().filter(|(_, t)| owns(t)) {
            pages += btree_pages(conn, name)?;
        }
        Ok(pages)
    }

    /// Before a writing statement: the plugin pages now, with the
    /// connection's page limit set to what the plugin (using `usage`
    /// pages) may still grow.
    pub(super) fn begin(&self, conn: &Connection, usage: i64) -> rusqlite::Result<i64> {
        let remaining = (self.quota_pages() - usage).max(0);
        let limit = pragma(conn, "page_count")?
            .saturating_add(remaining)
            .saturating_add(SLACK_PAGES)
            .min(self.max_page_count);
        conn.pragma_update(None, "max_page_count", limit)?;
        plugin_pages(conn)
    }

    /// Put the connection's page limit back (after every statement begun).
    pub(super) fn end(&self, conn: &Connection) -> rusqlite::Result<()> {
        conn.pragma_update(None, "max_page_count", self.max_page_count)
    }

    /// After the statement, inside its transaction: the plugin's new usage,
    /// or why it is refused with its usage before the statement (both in
    /// pages). `before` is what [`Meter::begin`] returned.
    /// A refusal is decided on a fresh measure (`owns` as for
    /// [`Meter::measure`]), so a usage gone stale (another process changed
    /// the file) never refuses a write that fits.
    pub(super) fn check(
        &self,
        conn: &Connection,
        plugin: &str,
        usage: i64,
        before: i64,
        owns: impl Fn(&str) -> bool,
    ) -> rusqlite::Result<Result<i64, (QuotaExceeded, i64)>> {
        let grown = plugin_pages(conn)? - before;
        let after = usage + grown;
        if grown <= 0 || after <= self.quota_pages() {
            return Ok(Ok(after.max(0)));
        }
        let after = self.measure(conn, owns)?;
        if after <= self.quota_pages() {
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
            quota: self.quota,
            plugin: plugin.to_owned(),
            detail: format!(
                "{} bytes used, {} bytes left, and the statement needs more; delete rows or drop tables to make room",
                self.bytes(usage),
                self.bytes(self.quota_pages() - usage)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_pages_leave_out_the_shared_btrees() {
        let conn = Connection::open_in_memory().expect("open");
        let base = plugin_pages(&conn).expect("pages");
        conn.execute_batch("CREATE TABLE a (x); CREATE TABLE kaged_storage_owners (n)")
            .expect("create");
        // One root page for `a`; the registry and the catalogue are shared.
        assert_eq!(plugin_pages(&conn).expect("pages"), base + 1);
        let meter = Meter::new(&conn, 1 << 20).expect("meter");
        assert_eq!(meter.measure(&conn, |t| t == "a").expect("measure"), 1);
        assert_eq!(meter.bytes(2), 2 * 4096);
    }
}
