//! The files: entries as `<dir>/<id>.md`, written atomically (temporary
//! file, then rename), and a `README.md` at the store root written on first
//! use. Blocking I/O: callers run it on a blocking thread.

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::entry::{valid_id, Entry};
use crate::paths::Scope;

/// The README written at the store root (ADR-0023: "README at store root").
pub const README: &str = "# kaged memory (memory-markdown)

This directory is the memory of the `memory-markdown` kaged plugin.

- `<project_id>/<agent_path>/` holds an agent's entries (isolation `agent`).
- `<project_id>/_project/` holds entries shared by a project's agents
  (isolation `project`).
- Each entry is one markdown file, `<id>.md`: YAML frontmatter (`id`,
  `created_at`, `tags`, `context`, `source`) then the remembered text.
  Ids are creation times, so `ls` lists entries oldest first.

You may read, edit or delete entries by hand; the plugin re-reads the files
on every call. Files that do not parse are skipped (and logged).
";

/// Write `text` to `path` atomically: a temporary file in the same
/// directory (a name of its own, created exclusively: two sessions of the
/// plugin, each in its own cage and pid namespace where both may be pid 2,
/// never share one), flushed, then renamed over `path`.
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("no parent directory"))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    // On failure the temporary file is removed when `tmp` drops.
    tmp.persist(path).map(drop).map_err(|e| e.error)
}

/// Create the store root's README if it is missing.
pub fn ensure_readme(root: &Path) -> std::io::Result<()> {
    let readme = root.join("README.md");
    if readme.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(root)?;
    write_atomic(&readme, README)
}

/// The file of entry `id` in `dir`.
pub fn entry_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.md"))
}

/// Write a new entry; `AlreadyExists` when its id is taken. Returns the
/// file's path.
pub fn insert(scope: &Scope, entry: &Entry) -> std::io::Result<PathBuf> {
    ensure_readme(&scope.root)?;
    std::fs::create_dir_all(&scope.dir)?;
    let path = entry_path(&scope.dir, &entry.id);
    if path.exists() {
        return Err(std::io::Error::new(
            ErrorKind::AlreadyExists,
            entry.id.clone(),
        ));
    }
    write_atomic(&path, &entry.to_markdown())?;
    Ok(path)
}

/// Every entry of `dir`, oldest first (a missing directory has none).
/// Files that do not parse are skipped with a warning.
pub fn list(dir: &Path) -> std::io::Result<Vec<Entry>> {
    let read = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut entries = Vec::new();
    for item in read {
        let path = item?.path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_none_or(|x| x != "md") || !valid_id(stem) {
            continue;
        }
        let parsed = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| Entry::parse(&t).map_err(|e| e.0));
        match parsed {
            Ok(mut e) => {
                // The file name is authoritative (a hand edit may not be).
                e.id = stem.to_string();
                entries.push(e);
            }
            Err(e) => {
                kaged_plugin_sdk::log::warn!(file = %path.display(), "skipping an entry: {e}")
            }
        }
    }
    entries.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(entries)
}

/// Delete entry `id`; false when there is none.
pub fn remove(dir: &Path, id: &str) -> std::io::Result<bool> {
    match std::fs::remove_file(entry_path(dir, id)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Isolation;
    use crate::entry::Source;

    #[test]
    fn insert_list_remove() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let scope = Scope {
            root: tmp.path().to_path_buf(),
            dir: tmp.path().join("p").join("primary"),
            isolation: Isolation::Agent,
        };
        let e = Entry {
            id: "20261122T211030123Z-0000".into(),
            created_at: "2026-11-22T21:10:30.123Z".into(),
            tags: vec!["t".into()],
            context: None,
            source: Source::Tool,
            content: "hello".into(),
        };
        let path = insert(&scope, &e).expect("insert");
        assert!(path.ends_with("p/primary/20261122T211030123Z-0000.md"));
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("README.md")).expect("readme"),
            README
        );
        assert_eq!(
            insert(&scope, &e).expect_err("taken").kind(),
            ErrorKind::AlreadyExists
        );
        std::fs::write(scope.dir.join("20261122T211030124Z-0000.md"), "garbage").expect("write");
        std::fs::write(scope.dir.join("notes.md"), "not an entry").expect("write");
        assert_eq!(list(&scope.dir).expect("list"), vec![e.clone()]);
        assert!(remove(&scope.dir, &e.id).expect("remove"));
        assert!(!remove(&scope.dir, &e.id).expect("gone"));
        assert!(list(&tmp.path().join("none"))
            .expect("missing dir")
            .is_empty());
        let leftovers: Vec<_> = std::fs::read_dir(&scope.dir)
            .expect("dir")
            .flatten()
            .filter(|f| f.file_name().to_string_lossy().starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "no temporary files left");
    }
}
