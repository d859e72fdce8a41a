//! # kaged-host-storage
//!
//! Layers, top first (`scripts/module-layers.py` checks that every import
//! runs down): <!-- layers: handler > broker > exec migrate > authorizer cache client > quota redact rewrite values write_queue > limits -->
//!
//! Brokered plugin storage (`kaged.storage.*`, plugin-host.md § "Plugin-scoped
//! storage", ADDENDUM §7): one SQLite database shared by every plugin of a
//! host, built as a security boundary.
//!
//! # Threat model
//!
//! A plugin is an untrusted subprocess that sends arbitrary SQL text. It
//! must never read, write, create, drop or even reliably probe another
//! plugin's objects or the database's own machinery, and it must never be
//! told its prefix. Buggy plugins are expected too: a refusal is an answer
//! (`-32003`, audited as `plugin.storage_denied`), never a kill.
//!
//! Three independent layers stand between the plugin and the file:
//!
//! 1. **The rewriter** ([`rewrite()`], `rewrite/`): parses exactly one
//!    statement with sqlparser's SQLite dialect and walks it with a visitor
//!    of its own (not sqlparser's plain relation visitor, which confuses CTE
//!    names, DROP, RENAME targets, index and trigger names). It accepts an
//!    allow-list of statement kinds — queries, `INSERT`/`UPDATE`/`DELETE`,
//!    `CREATE`/`DROP` `TABLE`/`VIEW`/`INDEX`/`TRIGGER`, `ALTER TABLE`
//!    `RENAME TO`/`RENAME COLUMN`/`ADD COLUMN`/`DROP COLUMN` — and prefixes
//!    every table, view, index and trigger name, rename target and
//!    foreign-key target, in subqueries, CTE bodies, views, trigger bodies
//!    and `WHEN` clauses too. CTE names (per scope; SQLite lets every CTE of
//!    a `WITH` see the others) and aliases are left alone. A rewritten table
//!    with no alias is aliased to its plugin-facing name, so
//!    `SELECT presets.name FROM presets` keeps working as
//!    `... FROM "plugin_oh_my_pi_presets" AS presets` (except for the
//!    `UPDATE`/`DELETE`/`INSERT` target inside a trigger body, where SQLite
//!    allows no alias; there, qualify columns with `new.`/`old.` or not at
//!    all). Placeholders are kept verbatim; if a rewrite would reorder
//!    unnumbered placeholders the statement is refused with `-32602`.
//! 2. **The authorizer** ([`AuthPolicy`], `authorizer.rs`): every plugin has
//!    its own connection whose SQLite authorizer only lets through objects
//!    with the plugin's prefix in `main`, and only the operations of the
//!    current [`Phase`] (read for `query`, write for DML, schema changes for
//!    DDL, nothing when idle). Views and triggers are checked when they run,
//!    with their underlying tables. A rewriter bug therefore cannot leak or
//!    alter another plugin's rows.
//! 3. **The catalogue check** (`exec.rs`): after each DDL statement, inside
//!    its transaction, the catalogue is compared with its state before; any
//!    object created or removed outside the plugin's prefix rolls the
//!    statement back (SQLite does not authorize the target name of
//!    `ALTER TABLE ... RENAME TO`).
//!
//! Connections are also hardened: `SQLITE_DBCONFIG_DEFENSIVE`, untrusted
//! schema, FTS3 tokenizers disabled, extension loading never enabled, no
//! attachable database (`SQLITE_LIMIT_ATTACHED` 0), values capped at 16 MiB
//! and SQL text at 1 MiB (the engine's backstop; a plugin's statement is
//! refused past [`MAX_STATEMENT_BYTES`], 64 KiB, before it is parsed), a
//! busy timeout, and a per-call time budget enforced by a progress handler
//! (runaway recursive CTEs answer `-32603`): 5 s for a `query`, 2 s for an
//! `exec` (`kaged_host_core::time::STORAGE_*`). The rewriter refuses
//! statements over [`MAX_STATEMENT_TOKENS`] tokens and SQL containing NUL,
//! so a plugin cannot overflow the host's stack with a pathological
//! expression.
//!
//! # The write lock
//!
//! SQLite has one write lock per database, which every plugin shares. The
//! broker's writes take turns at it in one first-come, first-served
//! [`WriteQueue`], a plugin holding one place at most (its own calls run
//! one at a time), each turn bounded by the write budget (2 s); a write
//! whose turn has not come within five budgets (10 s) answers `-32005`.
//! With `K` plugins writing at once, a write starts within `(K − 1) × 2 s`:
//! a plugin writing back to back cannot starve another's insert, which
//! SQLite's busy handler alone let it do (issue 45).
//!
//! The authorizer's residual trust: while a DDL statement runs, SQLite
//! needs the catalogue, so the `Schema` phase lets statements read
//! `sqlite_master`. A rewriter bug in a DDL statement could therefore copy
//! catalogue *metadata* (names, `CREATE` text) into the plugin's own table,
//! never another plugin's rows. Likewise, SQLite reports `count(*)` over a
//! FROM item as a column-less read that cannot be told apart from a CTE,
//! which is allowed for names outside the `plugin_`/`sqlite_`/`pragma_`/
//! `kaged_` namespaces (the only real tables of the database live there).
//!
//! # Prefixes and ownership
//!
//! The prefix is the spec's, `plugin_<name with - as _>_`
//! ([`storage_prefix`]: `plugin_oh_my_pi_`). It is not injective: `foo`'s
//! table `bar_x` and `foo-bar`'s table `x` are the same physical name. So
//! the broker keeps a registry (table `kaged_storage_owners`, outside every
//! prefix, mirrored in memory as [`Owners`]) of which plugin created which
//! object, and the registry is the authority: a name under a plugin's
//! prefix that the registry gives to another plugin is refused by the
//! broker before the statement runs (the rewriter reports every prefixed
//! name a statement touches in [`Rewritten::objects`]) and again by the
//! authorizer, `-32003` naming no owner. Whoever creates a name first holds
//! it; the other plugin's `CREATE` of its colliding name is refused the
//! same way (the only thing it learns is that it cannot have that name).
//! `schema`, `uninstall` and the quota count what the registry gives a
//! plugin. Opening a database claims objects that predate the registry and
//! moves objects an earlier broker wrote under `plugin_<name>_` (the `-`
//! kept) to the spec's prefix (`migrate.rs`, [`Migration`]).
//!
//! # Never telling one plugin about another
//!
//! A plugin's names are its own: a name it writes is prefixed with its own
//! prefix, so a table it lacks is a missing table (`-32602`, SQLite's own
//! `no such table: NAME`, the name as the plugin wrote it), whatever other
//! plugins hold, except for the one name the spec's prefix shares with
//! another plugin's object. That registry refusal (above) is a denial like
//! every other (`-32003`, ADDENDUM §16, [`StorageDenial::not_own`]): its
//! message names the table as the plugin wrote it and never the owner,
//! the physical name or anything in it; the audit log gets the owner.
//! Catalogue reads (`sqlite_master`, pragmas) are refused for everyone
//! alike. The quota (below) only counts the plugin's own pages.
//!
//! # Quota
//!
//! Each plugin's tables and indexes, with the text of its schema (the
//! `CREATE` statements of its tables, indexes, views and triggers, rounded
//! up to pages), may occupy at most [`StorageBroker::with_quota`] bytes of
//! the file (default [`DEFAULT_STORAGE_QUOTA`], 64 MiB), counted in pages:
//! see `quota.rs`. Its schema text alone may hold at most
//! [`MAX_SCHEMA_BYTES`] (256 KiB): every connection parses the whole
//! catalogue. A write past either is rolled back and answers `-32003` with
//! [`QuotaExceeded`]'s message, audited with reason `quota`; reads,
//! deletes and drops always run.
//!
//! # What is refused (`-32003`)
//!
//! * names (after unquoting, ASCII-case-insensitive) starting with
//!   `sqlite_`, `pragma_` (table-valued pragmas) or `plugin_` (any plugin's
//!   prefixed objects, including the caller's own prefix spelled out — see
//!   [`RESERVED_NAME_PREFIXES`]); this applies to CTE names too;
//! * schema-qualified names (`main.x`, `temp.x`, any `a.b`), and
//!   `schema.table.column` references;
//! * TEMP/TEMPORARY tables, views, triggers; virtual tables;
//! * `ATTACH`, `DETACH`, `PRAGMA`, `VACUUM`, `REINDEX`, `ANALYZE`,
//!   `EXPLAIN`, `BEGIN`/`COMMIT`/`END`/`ROLLBACK`/`SAVEPOINT`/`RELEASE`
//!   ([`DENIED_LEADING_KEYWORDS`]), and every other statement kind not on
//!   the allow-list;
//! * more than one statement per call;
//! * the functions of [`DENIED_FUNCTIONS`] and every `sqlite_*` function;
//!   qualified function names;
//! * table-valued functions and any other non-table source in `FROM`;
//! * `exec` without `kaged:storage:write`; `query`/`schema` without
//!   `kaged:storage:read` or `kaged:storage:write`; anything when storage is
//!   not available; anything but a read-only statement in `query`.
//!
//! Malformed params (`sql` missing or not a string, `params` not an array,
//! a param that is an array or object), SQL that does not parse, a wrong
//! number of parameters and SQL errors (constraints, missing tables) answer
//! `-32602`, with the prefix stripped from SQLite's message. Past the quota
//! a growing write answers `-32003` too.
//!
//! # Answers
//!
//! * `query`: `{"rows": [{column: value}], "columns": [..]}`. INTEGER and
//!   REAL are JSON numbers (NaN/±inf: `null`), TEXT a string, NULL `null`,
//!   and **BLOB an object `{"$base64": "<standard base64>"}`** ([`BLOB_KEY`])
//!   so it cannot be mistaken for text. Duplicate column names keep the last
//!   value in the row object (`columns` lists them all). Answers over
//!   [`MAX_RESULT_BYTES`] are refused with `-32602`.
//! * `exec`: `{"rows_affected": n}` (0 for DDL), in its own transaction,
//!   rolled back on any error. Bool params bind as 0/1.
//! * `schema`: `{"tables": [..]}`: the plugin's tables (not views),
//!   unprefixed, sorted.
//!
//! # Reprinting
//!
//! The executed SQL is sqlparser's reprint of its AST, so what sqlparser
//! misreads would run with another meaning. Known misreads are refused
//! with `-32602` instead: `- -x` (reprinted `--x`, a comment; any comment
//! in a reprint is refused), `0XFF` and other number-word runs, the postfix
//! `ISNULL`/`NOTNULL`; lower-case hex integers (`0xff`, read as blobs) are
//! turned back into integers. Syntax sqlparser 0.63 does not know (`<<`,
//! `>>`, `x IS y` with non-NULL `y`, `INDEXED BY`, ...) is `-32602`;
//! `CREATE TRIGGER IF NOT EXISTS` is handled by the rewriter itself.
//!
//! # Audit redaction
//!
//! [`StorageDenial::redacted_sql`] is the plugin's SQL through
//! [`redact_sql`]: every literal (string, number, blob) becomes `?`,
//! comments are dropped, names and keywords stay, at most
//! [`MAX_REDACTED_LEN`] characters.

mod authorizer;
mod broker;
mod cache;
mod client;
mod exec;
mod handler;
mod limits;
mod migrate;
mod quota;
mod redact;
pub mod rewrite;
mod values;
mod write_queue;

pub use authorizer::{install as install_authorizer, AuthPolicy, Owners, Phase};
pub use broker::{StorageBroker, StorageObject};
pub use cache::RewriteCache;
pub use client::{BrokerError, StorageClient, StorageDenial};
pub use exec::{unprefix, MAX_RESULT_BYTES};
pub use handler::BrokerHandler;
pub use limits::{MAX_SCHEMA_BYTES, MAX_STATEMENT_BYTES};
pub use migrate::Migration;
pub use quota::{QuotaExceeded, DEFAULT_STORAGE_QUOTA};
pub use redact::{redact_sql, MAX_REDACTED_LEN};
pub use rewrite::{
    is_bare_reserved_word, is_denied_function, is_reserved_name, rewrite, RewriteError, Rewritten,
    StatementKind, DENIED_FUNCTIONS, DENIED_LEADING_KEYWORDS, MAX_STATEMENT_TOKENS,
    RESERVED_NAME_PREFIXES, SQLITE_RESERVED_WORDS,
};
pub use values::{base64, parse_params, to_json, ParsedParams, BLOB_KEY};
pub use write_queue::{WriteQueue, WriteTurn};

/// The storage prefix of a plugin: `plugin_<name with - as _>_` (the spec's; not
/// injective, so the owner registry says whose an object is),
/// written once in the protocol crate (`Manifest::storage_prefix` uses it too).
pub use kaged_plugin_protocol::names::storage_prefix;
