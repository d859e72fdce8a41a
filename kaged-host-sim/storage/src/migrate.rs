//! Moving a database written under the spec's prefix to the injective one.
//!
//! The spec's prefix `plugin_<name with - as _>_`
//! ([`legacy_storage_prefix`]) is not injective: `foo`'s table `bar_x` and
//! `foo-bar`'s table `x` were both `plugin_foo_bar_x`. The host now keeps
//! the `-` ([`storage_prefix`]: `plugin_foo-bar_x`), which only changes
//! names of plugins whose name has a `-`. When a broker opens a database,
//! every object the owner registry records for such a plugin under its
//! legacy prefix is renamed to its new prefix, in one transaction:
//!
//! 1. its triggers, views and indexes are dropped (their SQL kept),
//! 2. its tables are renamed with `ALTER TABLE ... RENAME TO` (which also
//!    updates foreign keys and `sqlite_sequence`),
//! 3. the dropped objects are created again, in their original order, with
//!    the quoted legacy prefix replaced in their SQL (the rewriter always
//!    writes prefixed names double-quoted), and
//! 4. the registry follows.
//!
//! Objects that predate the registry carry no owner and are left as they
//! are: under the injective prefix they belong to the one plugin whose
//! prefix they start with.

use std::collections::HashMap;

use kaged_plugin_protocol::names::{is_plugin_name, legacy_storage_prefix, storage_prefix};
use rusqlite::Connection;

use super::authorizer::OWNERS_TABLE;

/// One plugin's registered legacy objects: old name to new name (lowercase
/// keys), and the quoted prefixes to swap in SQL text.
struct Move {
    names: HashMap<String, String>,
    from: String,
    to: String,
}

fn planned_moves(admin: &Connection) -> rusqlite::Result<Vec<Move>> {
    let mut stmt = admin.prepare(&format!(
        "SELECT name, plugin FROM {OWNERS_TABLE} WHERE instr(plugin, '-') > 0 ORDER BY plugin"
    ))?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    let mut moves: Vec<(String, Move)> = Vec::new();
    for (name, plugin) in rows {
        let legacy = legacy_storage_prefix(&plugin);
        let lower = name.to_ascii_lowercase();
        if !is_plugin_name(&plugin) || !lower.starts_with(&legacy) {
            continue;
        }
        let prefix = storage_prefix(&plugin);
        let new = format!("{prefix}{}", &lower[legacy.len()..]);
        if moves.last().is_none_or(|(p, _)| *p != plugin) {
            moves.push((
                plugin.clone(),
                Move {
                    names: HashMap::new(),
                    from: format!("\"{legacy}"),
                    to: format!("\"{prefix}"),
                },
            ));
        }
        if let Some((_, m)) = moves.last_mut() {
            m.names.insert(lower, new);
        }
    }
    Ok(moves.into_iter().map(|(_, m)| m).collect())
}

fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn apply(admin: &Connection, m: &Move) -> rusqlite::Result<()> {
    let mut stmt = admin.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY rowid")?;
    let objects = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let moved = |name: &str| m.names.get(&name.to_ascii_lowercase());
    let mut recreate = Vec::new();
    for kind in ["trigger", "view", "index"] {
        for (_, name, sql) in objects
            .iter()
            .filter(|(t, n, _)| t == kind && moved(n).is_some())
        {
            admin.execute_batch(&format!("DROP {} {}", kind.to_uppercase(), quoted(name)))?;
            if let Some(sql) = sql {
                recreate.push((name, sql.replace(&m.from, &m.to)));
            }
        }
    }
    for (_, name, _) in objects.iter().filter(|(t, _, _)| t == "table") {
        if let Some(new) = moved(name) {
            admin.execute_batch(&format!(
                "ALTER TABLE {} RENAME TO {}",
                quoted(name),
                quoted(new)
            ))?;
        }
    }
    // Back in their original (creation) order, which respects dependencies.
    let order: HashMap<&String, usize> = objects
        .iter()
        .enumerate()
        .map(|(i, (_, n, _))| (n, i))
        .collect();
    recreate.sort_by_key(|(n, _)| order.get(n).copied().unwrap_or(usize::MAX));
    for (_, sql) in &recreate {
        admin.execute_batch(sql)?;
    }
    for (old, new) in &m.names {
        admin.execute(
            &format!("UPDATE {OWNERS_TABLE} SET name = ?2 WHERE lower(name) = ?1"),
            [old, new],
        )?;
    }
    Ok(())
}

/// Rename every registered object of a plugin whose name has a `-` from
/// its legacy prefix to its prefix (see the [module docs](self)), all or
/// nothing. Answers how many objects moved. The moves are planned again
/// under the write lock, so two hosts opening one legacy file at once
/// both succeed (the second finds nothing left to move).
pub(super) fn migrate_legacy_prefixes(admin: &Connection) -> rusqlite::Result<usize> {
    if planned_moves(admin)?.is_empty() {
        return Ok(0);
    }
    admin.execute_batch("BEGIN IMMEDIATE")?;
    let result = planned_moves(admin).and_then(|moves| {
        moves.iter().try_for_each(|m| apply(admin, m))?;
        Ok(moves.iter().map(|m| m.names.len()).sum())
    });
    match result {
        Ok(moved) => {
            admin.execute_batch("COMMIT")?;
            Ok(moved)
        }
        Err(e) => {
            let _ = admin.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}
