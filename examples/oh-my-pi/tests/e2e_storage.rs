//! oh-my-pi on brokered storage (plugin-host.md § "Plugin-scoped storage"):
//! the database holds only `plugin_oh_my_pi_*` objects, another plugin on
//! the same broker never sees its rows, uninstall cleanup drops them all,
//! and a host without storage gets a clear error.

mod common;

use common::{catalogue, host_without_storage, Omp, Place, WEB_DEV};
use kaged_host_core::{HostSim, PluginHandle};
use kaged_host_sim::ConnectPlugin;
use kaged_host_storage::StorageBroker;
use kaged_plugin_sdk::storage::StorageError;
use kaged_plugin_sdk::{sql_params, Call, Plugin, PluginError};
use serde_json::{json, Value};

/// An SDK plugin named `name` that runs the SQL it is given and reports
/// the typed outcome, served in-process on `host` (same broker).
async fn snooper(host: &HostSim, name: &str) -> PluginHandle {
    let run = |p: Value, c: Call| async move {
        let sql = p["sql"].as_str().unwrap_or_default().to_owned();
        let s = c.host.storage();
        let r = if p["exec"] == true {
            s.exec(&sql, sql_params![])
                .await
                .map(|r| json!({"rows_affected": r.rows_affected}))
        } else {
            s.query(&sql, sql_params![])
                .await
                .map(|r| json!({"rows": r.rows}))
        };
        Ok::<_, PluginError>(match r {
            Ok(v) => v,
            Err(StorageError::Denied(e)) => json!({"denied": e.message}),
            Err(e) => json!({"error": e.rpc().map(|r| r.code), "message": e.to_string(),
                             "rpc_message": e.rpc().map(|r| r.message.clone())}),
        })
    };
    let plugin = Plugin::builder(name)
        .version("1.0.0")
        .description("tries to read other plugins' rows")
        .command(["./in-process"])
        .capability_used("kaged:storage:read")
        .capability_used("kaged:storage:write")
        .method("snoop.sql", run)
        .build()
        .expect("snooper");
    host.connect_plugin(plugin)
        .await
        .expect("snooper handshake")
}

async fn sql(s: &PluginHandle, sql: &str, exec: bool) -> Value {
    s.call("snoop.sql", Some(json!({"sql": sql, "exec": exec})), None)
        .await
        .expect("snoop.sql answers")
}

async fn install_two(omp: &Omp) {
    omp.ok("preset.install", json!({"name": "web-dev"})).await;
    let spec = json!({"version": "1.0.0", "description": "Ops.", "tags": ["ops"]});
    omp.ok("preset.install", json!({"name": "k8s-ops", "preset": spec}))
        .await;
}

const OWN_OBJECTS: [(&str, &str); 7] = [
    ("table", "plugin_oh_my_pi_history"),
    ("index", "plugin_oh_my_pi_history_by_name"),
    ("table", "plugin_oh_my_pi_presets"),
    ("trigger", "plugin_oh_my_pi_presets_installed"),
    ("trigger", "plugin_oh_my_pi_presets_uninstalled"),
    ("trigger", "plugin_oh_my_pi_presets_updated"),
    ("index", "sqlite_autoindex_plugin_oh_my_pi_presets_1"),
];

#[tokio::test]
async fn the_database_holds_only_plugin_oh_my_pi_objects() {
    let place = Place::new();
    place.preset_file("web-dev.yaml", WEB_DEV);
    let (host, audit) = place.host();
    let omp = Omp::launch(&host, &place.presets()).await;
    install_two(&omp).await;
    omp.ok("preset.uninstall", json!({"name": "k8s-ops"})).await;
    omp.plugin.shutdown().await;

    let objects = catalogue(&place.db());
    let ours: Vec<(&str, &str)> = objects
        .iter()
        .filter(|(_, _, table)| table != "kaged_storage_owners") // the broker's own registry
        .map(|(kind, name, _)| (kind.as_str(), name.as_str()))
        .collect();
    assert_eq!(ours, OWN_OBJECTS, "{objects:?}");
    assert!(objects
        .iter()
        .filter(|(_, _, t)| t != "kaged_storage_owners")
        .all(|(_, _, t)| t.starts_with("plugin_oh_my_pi_")));
    let broker = StorageBroker::open(&place.db()).expect("broker");
    assert_eq!(
        broker.tables("oh-my-pi").expect("tables"),
        ["history", "presets"]
    );
    assert_eq!(
        broker.owner_of("plugin_oh_my_pi_presets").as_deref(),
        Some("oh-my-pi")
    );
    assert!(audit
        .of(kaged_host_core::AuditEvent::StorageDenied)
        .is_empty());
}

#[tokio::test]
async fn rows_never_leak_to_another_plugin() {
    let place = Place::new();
    place.preset_file("web-dev.yaml", WEB_DEV);
    let (host, audit) = place.host();
    let omp = Omp::launch(&host, &place.presets()).await;
    install_two(&omp).await;

    let other = snooper(&host, "snooper").await;
    // Its `presets` is its own (missing) table, never oh-my-pi's.
    let v = sql(&other, "SELECT * FROM presets", false).await;
    assert_eq!(v["error"], -32602, "{v}");
    assert!(
        v["message"]
            .as_str()
            .is_some_and(|m| m.contains("no such table: presets")),
        "{v}"
    );
    for attempt in [
        "SELECT * FROM \"plugin_oh_my_pi_presets\"",
        "SELECT * FROM plugin_oh_my_pi_presets",
        "SELECT name FROM sqlite_master",
        "WITH x AS (SELECT * FROM \"plugin_oh_my_pi_history\") SELECT * FROM x",
    ] {
        let v = sql(&other, attempt, false).await;
        assert!(v["denied"].is_string(), "{attempt}: {v}");
    }
    let v = sql(&other, "DELETE FROM \"plugin_oh_my_pi_presets\"", true).await;
    assert!(v["denied"].is_string(), "{v}");
    // Same table names, separate rows.
    sql(&other, "CREATE TABLE presets (name TEXT)", true).await;
    sql(&other, "INSERT INTO presets VALUES ('snooped')", true).await;
    assert_eq!(
        sql(&other, "SELECT name FROM presets", false).await["rows"],
        json!([{"name": "snooped"}])
    );
    assert_eq!(omp.names().await, ["k8s-ops", "web-dev"]);

    // Under the spec's prefix (`-` as `_`), `oh-my`'s `pi_presets` is
    // oh-my-pi's `presets`: the owner registry refuses it to `oh-my`,
    // -32003 naming only what it wrote, and its rows never show.
    let lookalike = snooper(&host, "oh-my").await;
    for (sql_text, exec, table) in [
        ("SELECT * FROM pi_presets", false, "pi_presets"),
        ("DROP TABLE pi_history", true, "pi_history"),
        ("DELETE FROM pi_presets", true, "pi_presets"),
        (
            "CREATE TABLE IF NOT EXISTS pi_presets (x)",
            true,
            "pi_presets",
        ),
    ] {
        let v = sql(&lookalike, sql_text, exec).await;
        assert_eq!(
            v["denied"],
            format!("storage access denied: `{table}` is not one of this plugin's tables"),
            "{v}"
        );
    }
    // A name it does not share is its own, missing like any other.
    let v = sql(&lookalike, "SELECT * FROM presets", false).await;
    assert_eq!(v["rpc_message"], "no such table: presets", "{v}");
    assert_eq!(omp.names().await, ["k8s-ops", "web-dev"]);
    let denied: Vec<_> = audit
        .of(kaged_host_core::AuditEvent::StorageDenied)
        .into_iter()
        .map(|r| r.data["sql"].clone())
        .collect();
    assert_eq!(
        denied.len(),
        9,
        "the snooper's and the look-alike's: {denied:?}"
    );
    for s in [&other, &lookalike, &omp.plugin] {
        s.shutdown().await;
    }
}

#[tokio::test]
async fn uninstall_cleanup_drops_every_catalogue_object_and_nothing_else() {
    let place = Place::new();
    place.preset_file("web-dev.yaml", WEB_DEV);
    let (host, _audit) = place.host();
    let omp = Omp::launch(&host, &place.presets()).await;
    install_two(&omp).await;
    let other = snooper(&host, "snooper").await;
    sql(&other, "CREATE TABLE presets (name TEXT)", true).await;
    omp.plugin.shutdown().await;
    other.shutdown().await;

    let broker = StorageBroker::open(&place.db()).expect("broker");
    let mut dropped = broker.uninstall("oh-my-pi").expect("uninstall");
    dropped.sort();
    let expected: Vec<&str> = OWN_OBJECTS
        .iter()
        .map(|(_, n)| *n)
        .filter(|n| !n.starts_with("sqlite_")) // goes with its table
        .collect();
    assert_eq!(dropped, expected);
    let left: Vec<String> = catalogue(&place.db())
        .into_iter()
        .map(|(_, n, _)| n)
        .collect();
    assert!(left.iter().all(|n| !n.contains("oh-my-pi")), "{left:?}");
    assert!(
        left.contains(&"plugin_snooper_presets".to_string()),
        "{left:?}"
    );
    drop(broker);

    // Installed again later, the plugin starts from an empty catalogue.
    let (host, _audit) = place.host();
    let omp = Omp::launch(&host, &place.presets()).await;
    assert_eq!(
        omp.ok("presets.list", json!({})).await,
        json!({"presets": [], "revision": 0})
    );
    omp.plugin.shutdown().await;
}

#[tokio::test]
async fn without_storage_the_plugin_says_what_it_needs() {
    let place = Place::new();
    let (host, _audit) = host_without_storage();
    let omp = Omp::launch(&host, &place.presets()).await;
    for (method, params) in [
        ("presets.list", json!({})),
        (
            "preset.install",
            json!({"name": "x", "preset": {"version": "1", "description": "d"}}),
        ),
        ("presets.search", json!({"query": "web"})),
    ] {
        let (code, message, data) = omp.err(method, params).await;
        assert_eq!(
            (code, data["error"].as_str()),
            (-32000, Some("storage_unavailable")),
            "{method}: {message}"
        );
        assert!(message.contains("kaged:storage:write"), "{message}");
    }
    omp.plugin.shutdown().await;
}
