//! The sizes that bound a plugin's SQL text, besides the page quota
//! (`quota.rs`, `DEFAULT_STORAGE_QUOTA`) and the rewriter's token limit
//! (`MAX_STATEMENT_TOKENS`). The durations (statement and write budgets,
//! the write queue) are `kaged_host_core::time`'s `STORAGE_*`.

/// The longest SQL text one storage call may carry, in bytes; a longer
/// statement answers `-32602` ("statement too long", like the token limit)
/// before it is parsed. Values belong in parameters (each up to 16 MiB);
/// the text of a hand-written statement, a `CREATE TRIGGER` with a long
/// body included, is a few KiB. The cap also bounds what one `CREATE VIEW`
/// or `CREATE TRIGGER` adds to the schema every connection parses (issue
/// 45: 1 MB views grew the database by 52–80 MiB past a 1 MiB quota).
pub const MAX_STATEMENT_BYTES: usize = 64 * 1024;

/// The SQL text a plugin's schema may hold, in bytes: the `CREATE`
/// statements the catalogue keeps for its tables, indexes, views and
/// triggers (as rewritten, prefixes included). The text also counts
/// against the plugin's quota (rounded up to pages), but every connection
/// of the host parses and keeps the whole catalogue: 12.5 MiB of views
/// made each of 8 connections 14 MiB larger (measured with SQLite 3 on
/// this kit's machine), so one plugin's schema is bounded well below any
/// quota. A hundred tables with their indexes and triggers take some
/// 50 KiB. A statement that would take the schema past it is refused
/// with `-32003`, like the quota, audited with reason `quota`; `DROP`
/// always runs.
pub const MAX_SCHEMA_BYTES: u64 = 256 * 1024;
