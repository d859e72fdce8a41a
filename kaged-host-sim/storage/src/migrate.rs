//! Bringing a database written by an earlier broker under the spec's
//! prefix and the owner registry.
//!
//! The prefix is the spec's, `plugin_<name with - as _>_`
//! ([`storage_prefix`]). It is not injective: `foo`'s table `bar_x` and
//! `foo-bar`'s table `x` are one physical name, `plugin_foo_bar_x`. So the
//! owner registry (`kaged_storage_owners`, see `authorizer.rs`) is the one
//! authority on whose object is whose, and every `plugin_` object must be
//! in it. When a broker opens a database, in one transaction:
//!
//! 1. **Claim.** Each `plugin_` object with no registry entry (written
//!    before the registry existed) is registered to the plugin named by
//!    its first segment, `plugin_<segment>_...`: plugin names never hold
//!    `_`, so that reading is exact for every name the kit ever wrote with
//!    the `-` kept, and for a name without `-` (the spec's form, where
//!    `plugin_foo_bar_x` could be `foo`'s `bar_x` or `foo-bar`'s `x`) it
//!    picks the plugin without `-`, the reading both forms share.
//! 2. **Move.** An earlier broker kept the `-` (`plugin_oh-my-pi_`). Every
//!    object registered to a plugin whose name has a `-` and that still
//!    carries that form is renamed to the spec's prefix: its triggers,
//!    views and indexes dropped (their SQL kept), its tables renamed with
//!    `ALTER TABLE ... RENAME TO` (which updates foreign keys and
//!    `sqlite_sequence`), the dropped objects created again in their
//!    original order with the quoted prefix replaced in their SQL (the
//!    rewriter always writes prefixed names double-quoted), and the
//!    registry follows.
//! 3. **Collisions stay put.** A plugin one of whose new names is already
//!    taken (`foo` created `bar_x` after `foo-bar` created `x` under the
//!    old prefix) keeps all its objects under the old prefix, data
//!    intact, registered to it, and is reported as
//!    [`Migration::stranded`]: the statements it writes name the other
//!    plugin's object now and are refused (`-32003`), until an operator
//!    renames or drops one side. Moving only part of a plugin would point
//!    its triggers and views at another plugin's objects.

use std::collections::{HashMap, HashSet};

use kaged_plugin_protocol::names::{is_plugin_name, storage_prefix};
use rusqlite::Connection;

use super::authorizer::OWNERS_TABLE;

/// What opening a database changed: how many objects were claimed for
/// the registry and moved to the spec's prefix, and which plugins could
/// not be moved because a new name was taken.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Migration {
    /// Objects registered to the plugin their name starts with.
    pub claimed: usize,
    /// Objects renamed from `plugin_<name>_` to the spec's prefix.
    pub moved: usize,
    /// Plugins left under the old prefix, with the new name that was taken.
    pub stranded: Vec<(String, String)>,
}

/// The prefix an earlier broker wrote: the plugin name with its `-` kept.
fn kept_hyphen_prefix(plugin: &str) -> String {
    format!("plugin_{plugin}_")
}

/// Every object of the catalogue: (type, name, sql), in creation order.
fn objects(admin: &Connection) -> rusqlite::Result<Vec<(String, String, Option<String>)>> {
    let mut stmt = admin.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY rowid")?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect();
    rows
}

/// Registry entries: lowercase name to plugin.
fn registry(admin: &Connection) -> rusqlite::Result<HashMap<String, String>> {
    let mut stmt = admin.prepare(&format!("SELECT name, plugin FROM {OWNERS_TABLE}"))?;
    let rows = stmt
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?.to_ascii_lowercase(), r.get(1)?))
        })?
        .collect();
    rows
}

/// The plugin the first segment of `plugin_<segment>_...` names.
fn first_segment_owner(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("plugin_")?;
    let (segment, _) = rest.split_once('_')?;
    is_plugin_name(segment).then_some(segment)
}

/// Unregistered `plugin_` objects and the plugin each is claimed for.
fn claims(
    objects: &[(String, String, Option<String>)],
    registry: &HashMap<String, String>,
) -> Vec<(String, String)> {
    objects
        .iter()
        .filter(|(_, name, _)| !registry.contains_key(&name.to_ascii_lowercase()))
        .filter_map(|(_, name, _)| {
            let owner = first_segment_owner(&name.to_ascii_lowercase())?.to_owned();
            Some((name.clone(), owner))
        })
        .collect()
}

/// One plugin's objects under the old prefix: old name to new name
/// (lowercase keys), and the quoted prefixes to swap in SQL text.
struct Move {
    plugin: String,
    names: HashMap<String, String>,
    from: String,
    to: String,
}

/// The moves to make, and the plugins that cannot move (a new name taken
/// by an object that is not one of the plugin's own being moved).
fn planned_moves(
    objects: &[(String, String, Option<String>)],
    registry: &HashMap<String, String>,
) -> (Vec<Move>, Vec<(String, String)>) {
    let mut by_plugin: Vec<Move> = Vec::new();
    let mut plugins: Vec<&String> = registry.values().filter(|p| p.contains('-')).collect();
    plugins.sort();
    plugins.dedup();
    for plugin in plugins {
        if !is_plugin_name(plugin) {
            continue;
        }
        let old = kept_hyphen_prefix(plugin);
        let new = storage_prefix(plugin);
        let names: HashMap<String, String> = registry
            .iter()
            .filter(|(name, p)| *p == plugin && name.starts_with(&old))
            .map(|(name, _)| (name.clone(), format!("{new}{}", &name[old.len()..])))
            .collect();
        if !names.is_empty() {
            by_plugin.push(Move {
                plugin: plugin.clone(),
                names,
                from: format!("\"{old}"),
                to: format!("\"{new}"),
            });
        }
    }
    let mut taken: HashSet<String> = objects
        .iter()
        .map(|(_, n, _)| n.to_ascii_lowercase())
        .chain(registry.keys().cloned())
        .collect();
    let mut moves = Vec::new();
    let mut stranded = Vec::new();
    for m in by_plugin {
        let own: HashSet<&String> = m.names.keys().collect();
        let clash = m
            .names
            .values()
            .find(|new| taken.contains(*new) && !own.contains(new));
        match clash {
            Some(new) => stranded.push((m.plugin.clone(), new.clone())),
            None => {
                taken.extend(m.names.values().cloned());
                moves.push(m);
            }
        }
    }
    (moves, stranded)
}

/// `name` as an SQL identifier, double-quoted.
pub(super) fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn apply(
    admin: &Connection,
    objects: &[(String, String, Option<String>)],
    m: &Move,
) -> rusqlite::Result<()> {
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

/// Claim unregistered objects and move the kept-hyphen prefix to the
/// spec's (see the [module docs](self)), all or nothing. The work is
/// planned again under the write lock, so two hosts opening one old file
/// at once both succeed (the second finds nothing left to do).
pub(super) fn migrate(admin: &Connection) -> rusqlite::Result<Migration> {
    let plan = |admin: &Connection| -> rusqlite::Result<_> {
        let objects = objects(admin)?;
        let mut registry = registry(admin)?;
        let claims = claims(&objects, &registry);
        for (name, owner) in &claims {
            registry.insert(name.to_ascii_lowercase(), owner.clone());
        }
        let (moves, stranded) = planned_moves(&objects, &registry);
        Ok((objects, claims, moves, stranded))
    };
    let (_, claims, moves, stranded) = plan(admin)?;
    if claims.is_empty() && moves.is_empty() {
        return Ok(Migration {
            stranded,
            ..Migration::default()
        });
    }
    admin.execute_batch("BEGIN IMMEDIATE")?;
    let result = plan(admin).and_then(|(objects, claims, moves, stranded)| {
        for (name, owner) in &claims {
            admin.execute(
                &format!("INSERT INTO {OWNERS_TABLE} (name, plugin) VALUES (?1, ?2)"),
                [name, owner],
            )?;
        }
        moves.iter().try_for_each(|m| apply(admin, &objects, m))?;
        Ok(Migration {
            claimed: claims.len(),
            moved: moves.iter().map(|m| m.names.len()).sum(),
            stranded,
        })
    });
    match result {
        Ok(done) => {
            admin.execute_batch("COMMIT")?;
            Ok(done)
        }
        Err(e) => {
            let _ = admin.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_segment_names_the_owner() {
        assert_eq!(
            first_segment_owner("plugin_oh-my-pi_presets"),
            Some("oh-my-pi")
        );
        assert_eq!(first_segment_owner("plugin_foo_bar_x"), Some("foo"));
        assert_eq!(first_segment_owner("plugin_x"), None);
        assert_eq!(first_segment_owner("kaged_storage_owners"), None);
    }
}
