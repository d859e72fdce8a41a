//! A database written under the spec's prefix (`plugin_<name with - as
//! _>_`) opens with every registered object of a plugin whose name has a
//! `-` moved to the injective prefix (`plugin_<name>_`): tables with their
//! rows, indexes, views and triggers, and the owner registry.

use crate::support::storage::*;
use kaged_host_storage::StorageBroker;
use serde_json::json;

/// What the old broker wrote for `oh-my-pi` (prefixed names quoted), for
/// `foo` (no `-`: unchanged) and `foo-bar` (whose `x` collided with
/// `foo`'s `bar_x`; here `foo` registered it first and `foo-bar` got `y`).
const LEGACY: &str = r#"
CREATE TABLE kaged_storage_owners (name TEXT PRIMARY KEY, plugin TEXT NOT NULL);
CREATE TABLE "plugin_oh_my_pi_presets" (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE);
CREATE TABLE "plugin_oh_my_pi_history" (name TEXT, preset INTEGER REFERENCES "plugin_oh_my_pi_presets" (id));
CREATE INDEX "plugin_oh_my_pi_history_by_name" ON "plugin_oh_my_pi_history" (name);
CREATE VIEW "plugin_oh_my_pi_names" AS SELECT presets.name FROM "plugin_oh_my_pi_presets" AS presets;
CREATE TRIGGER "plugin_oh_my_pi_log" AFTER INSERT ON "plugin_oh_my_pi_presets" BEGIN INSERT INTO "plugin_oh_my_pi_history" (name, preset) VALUES (new.name, new.id); END;
INSERT INTO "plugin_oh_my_pi_presets" (name) VALUES ('web-dev');
CREATE TABLE "plugin_foo_bar_x" (v);
INSERT INTO "plugin_foo_bar_x" VALUES ('foo');
CREATE TABLE "plugin_foo_bar_y" (v);
INSERT INTO "plugin_foo_bar_y" VALUES ('foo-bar');
INSERT INTO kaged_storage_owners VALUES
  ('plugin_oh_my_pi_presets', 'oh-my-pi'), ('plugin_oh_my_pi_history', 'oh-my-pi'),
  ('plugin_oh_my_pi_history_by_name', 'oh-my-pi'), ('plugin_oh_my_pi_names', 'oh-my-pi'),
  ('plugin_oh_my_pi_log', 'oh-my-pi'),
  ('plugin_foo_bar_x', 'foo'), ('plugin_foo_bar_y', 'foo-bar');
"#;

#[test]
fn a_legacy_database_moves_to_the_injective_prefix() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("legacy.sqlite3");
    rusqlite::Connection::open(&path)
        .expect("raw")
        .execute_batch(LEGACY)
        .expect("legacy schema");
    let b = StorageBroker::open(&path).expect("open migrates");
    let mut names = master_names(&b);
    names.sort();
    assert_eq!(
        names,
        [
            "kaged_storage_owners",
            "plugin_foo-bar_y",
            "plugin_foo_bar_x",
            "plugin_oh-my-pi_history",
            "plugin_oh-my-pi_history_by_name",
            "plugin_oh-my-pi_log",
            "plugin_oh-my-pi_names",
            "plugin_oh-my-pi_presets",
            "sqlite_autoindex_kaged_storage_owners_1",
            "sqlite_autoindex_plugin_oh-my-pi_presets_1",
            "sqlite_sequence",
        ]
    );
    assert_eq!(
        b.owner_of("plugin_oh-my-pi_presets").as_deref(),
        Some("oh-my-pi")
    );
    assert_eq!(b.owner_of("plugin_oh_my_pi_presets"), None);
    assert_eq!(b.owner_of("plugin_foo-bar_y").as_deref(), Some("foo-bar"));
    assert_eq!(b.owner_of("plugin_foo_bar_x").as_deref(), Some("foo"));

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
    // `foo` keeps `bar_x`; `foo-bar` has its `y` and may now create `x`.
    let v = ok(query(&b, &writer("foo"), "SELECT v FROM bar_x", json!([])));
    assert_eq!(v["rows"], json!([{"v": "foo"}]));
    let fb = writer("foo-bar");
    let v = ok(query(&b, &fb, "SELECT v FROM y", json!([])));
    assert_eq!(v["rows"], json!([{"v": "foo-bar"}]));
    ok(exec(&b, &fb, "CREATE TABLE x (v)", json!([])));
    drop(b);
    // Opening again moves nothing more.
    let b = StorageBroker::open(&path).expect("reopen");
    assert_eq!(schema(&b, &writer("oh-my-pi")), vec!["history", "presets"]);
    assert_eq!(schema(&b, &writer("foo-bar")), vec!["x", "y"]);
}
