//! A database an earlier broker wrote, with the plugin name's `-` kept in
//! the prefix (`plugin_oh-my-pi_`) and objects older than the owner
//! registry, opens under the spec's prefix (`plugin_oh_my_pi_`, ADDENDUM
//! §16): every object registered, every registered object of a plugin
//! whose name has a `-` moved (tables with their rows, indexes, views,
//! triggers, and the registry), and a plugin whose new name is taken left
//! where it was, data intact.

use crate::support::storage::*;
use kaged_host_storage::{Migration, StorageBroker};
use serde_json::json;

/// What the old broker wrote for `oh-my-pi` (prefixed names quoted), for
/// `foo` (no `-`: unchanged), for `foo-bar` (whose `x` is `foo`'s `bar_x`
/// under the spec's prefix: it stays), and two objects from before the
/// registry (`old-one`'s, moved; `zed`'s, claimed).
const LEGACY: &str = r#"
CREATE TABLE kaged_storage_owners (name TEXT PRIMARY KEY, plugin TEXT NOT NULL);
CREATE TABLE "plugin_oh-my-pi_presets" (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE);
CREATE TABLE "plugin_oh-my-pi_history" (name TEXT, preset INTEGER REFERENCES "plugin_oh-my-pi_presets" (id));
CREATE INDEX "plugin_oh-my-pi_history_by_name" ON "plugin_oh-my-pi_history" (name);
CREATE VIEW "plugin_oh-my-pi_names" AS SELECT presets.name FROM "plugin_oh-my-pi_presets" AS presets;
CREATE TRIGGER "plugin_oh-my-pi_log" AFTER INSERT ON "plugin_oh-my-pi_presets" BEGIN INSERT INTO "plugin_oh-my-pi_history" (name, preset) VALUES (new.name, new.id); END;
INSERT INTO "plugin_oh-my-pi_presets" (name) VALUES ('web-dev');
CREATE TABLE "plugin_foo_bar_x" (v);
INSERT INTO "plugin_foo_bar_x" VALUES ('foo');
CREATE TABLE "plugin_foo-bar_x" (v);
INSERT INTO "plugin_foo-bar_x" VALUES ('foo-bar x');
CREATE TABLE "plugin_foo-bar_y" (v);
INSERT INTO "plugin_foo-bar_y" VALUES ('foo-bar y');
CREATE TABLE "plugin_old-one_notes" (v);
INSERT INTO "plugin_old-one_notes" VALUES ('old');
CREATE TABLE "plugin_zed_t" (v);
INSERT INTO kaged_storage_owners VALUES
  ('plugin_oh-my-pi_presets', 'oh-my-pi'), ('plugin_oh-my-pi_history', 'oh-my-pi'),
  ('plugin_oh-my-pi_history_by_name', 'oh-my-pi'), ('plugin_oh-my-pi_names', 'oh-my-pi'),
  ('plugin_oh-my-pi_log', 'oh-my-pi'),
  ('plugin_foo_bar_x', 'foo'), ('plugin_foo-bar_x', 'foo-bar'), ('plugin_foo-bar_y', 'foo-bar');
"#;

#[test]
fn an_old_database_moves_to_the_specs_prefix() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("legacy.sqlite3");
    rusqlite::Connection::open(&path)
        .expect("raw")
        .execute_batch(LEGACY)
        .expect("legacy schema");
    let b = StorageBroker::open(&path).expect("open migrates");
    assert_eq!(
        b.migration(),
        &Migration {
            claimed: 2,
            moved: 6,
            stranded: vec![("foo-bar".into(), "plugin_foo_bar_x".into())],
        }
    );
    let mut names = master_names(&b);
    names.sort();
    assert_eq!(
        names,
        [
            "kaged_storage_owners",
            "plugin_foo-bar_x",
            "plugin_foo-bar_y",
            "plugin_foo_bar_x",
            "plugin_oh_my_pi_history",
            "plugin_oh_my_pi_history_by_name",
            "plugin_oh_my_pi_log",
            "plugin_oh_my_pi_names",
            "plugin_oh_my_pi_presets",
            "plugin_old_one_notes",
            "plugin_zed_t",
            "sqlite_autoindex_kaged_storage_owners_1",
            "sqlite_autoindex_plugin_oh_my_pi_presets_1",
            "sqlite_sequence",
        ]
    );
    assert_eq!(
        b.owner_of("plugin_oh_my_pi_presets").as_deref(),
        Some("oh-my-pi")
    );
    assert_eq!(b.owner_of("plugin_oh-my-pi_presets"), None);
    assert_eq!(b.owner_of("plugin_foo-bar_y").as_deref(), Some("foo-bar"));
    assert_eq!(b.owner_of("plugin_foo_bar_x").as_deref(), Some("foo"));
    assert_eq!(
        b.owner_of("plugin_old_one_notes").as_deref(),
        Some("old-one")
    );
    assert_eq!(b.owner_of("plugin_zed_t").as_deref(), Some("zed"));

    let omp = writer("oh-my-pi");
    assert_eq!(schema(&b, &omp), vec!["history", "presets"]);
    // The trigger, the view, the foreign key and AUTOINCREMENT followed.
    ok(exec(
        &b,
        &omp,
        "INSERT INTO presets (name) VALUES ('cli')",
        json!([]),
    ));
    let v = ok(query(
        &b,
        &omp,
        "SELECT id, name FROM presets ORDER BY id",
        json!([]),
    ));
    assert_eq!(
        v["rows"],
        json!([{"id": 1, "name": "web-dev"}, {"id": 2, "name": "cli"}])
    );
    let v = ok(query(
        &b,
        &omp,
        "SELECT name, preset FROM history",
        json!([]),
    ));
    assert_eq!(
        v["rows"],
        json!([{"name": "web-dev", "preset": 1}, {"name": "cli", "preset": 2}])
    );
    let v = ok(query(
        &b,
        &omp,
        "SELECT name FROM names ORDER BY name",
        json!([]),
    ));
    assert_eq!(v["rows"], json!([{"name": "cli"}, {"name": "web-dev"}]));
    ok(exec(&b, &omp, "DROP INDEX history_by_name", json!([])));
    let v = ok(query(
        &b,
        &writer("old-one"),
        "SELECT v FROM notes",
        json!([]),
    ));
    assert_eq!(v["rows"], json!([{"v": "old"}]));
    // `foo` keeps `bar_x`; stranded `foo-bar` is refused it and sees none
    // of its old tables, which are intact and go with its uninstall.
    let v = ok(query(&b, &writer("foo"), "SELECT v FROM bar_x", json!([])));
    assert_eq!(v["rows"], json!([{"v": "foo"}]));
    let fb = writer("foo-bar");
    assert_eq!(code(query(&b, &fb, "SELECT v FROM x", json!([]))), DENIED);
    assert!(schema(&b, &fb).is_empty());
    drop(b);
    // Opening again changes nothing more.
    let b = StorageBroker::open(&path).expect("reopen");
    assert_eq!(b.migration().moved + b.migration().claimed, 0);
    assert_eq!(schema(&b, &writer("oh-my-pi")), vec!["history", "presets"]);
    let raw = rusqlite::Connection::open(&path).expect("raw");
    let kept: String = raw
        .query_row("SELECT v FROM \"plugin_foo-bar_y\"", [], |r| r.get(0))
        .expect("stranded rows kept");
    assert_eq!(kept, "foo-bar y");
    assert_eq!(
        b.uninstall("foo-bar").expect("uninstall"),
        ["plugin_foo-bar_x", "plugin_foo-bar_y"]
    );
    assert_eq!(code(query(&b, &fb, "SELECT v FROM x", json!([]))), DENIED);
    ok(exec(&b, &fb, "CREATE TABLE y (v)", json!([])));
}
