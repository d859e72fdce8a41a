//! oh-my-pi end to end: the real binary under the host simulator, with a
//! real storage broker and a preset directory. The catalogue round trip,
//! `catalog.updated`, and every error the methods answer.

mod common;

use common::{next_named, Omp, Place, RUST_CLI, WEB_DEV};
use kaged_example_oh_my_pi::api::CatalogUpdated;
use serde_json::{json, Value};

fn names(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} in {v}"))
        .iter()
        .map(|p| p["name"].as_str().expect("name").to_owned())
        .collect()
}

#[tokio::test]
async fn install_list_search_uninstall_round_trip() {
    let place = Place::new();
    place.preset_file("web-dev.yaml", WEB_DEV);
    place.preset_file("rust-cli.json", RUST_CLI);
    place.preset_file("broken.yaml", "version: [not, a, string\n");
    place.preset_file("Bad_Name.yaml", WEB_DEV);
    place.preset_file("notes.txt", "not a preset file");
    let (host, audit) = place.host();
    let omp = Omp::launch(&host, &place.presets()).await;

    assert_eq!(
        omp.ok("presets.list", json!({})).await,
        json!({"presets": [], "revision": 0})
    );
    // From the preset directory, and inline.
    let a = omp.ok("preset.install", json!({"name": "web-dev"})).await;
    assert_eq!(
        (a["action"].as_str(), a["revision"].as_i64()),
        (Some("installed"), Some(1))
    );
    assert_eq!(a["preset"]["version"], "1.0.0");
    assert_eq!(a["preset"]["tags"], json!(["web", "typescript", "testing"]));
    assert!(
        a["preset"]["source"]
            .as_str()
            .is_some_and(|s| s.ends_with("presets/web-dev.yaml")),
        "{a}"
    );
    assert!(humantime::parse_rfc3339(a["preset"]["installed_at"].as_str().expect("time")).is_ok());
    let inline = json!({"version": "2.1.0", "description": "Kubernetes operations: kubectl, helm, no surprises.",
                        "tags": ["k8s", "ops", "k8s"], "settings": {"model": "sonnet", "read_only": true}});
    let b = omp
        .ok(
            "preset.install",
            json!({"name": "k8s-ops", "preset": inline}),
        )
        .await;
    assert_eq!(b["preset"]["source"], "inline");
    assert_eq!(
        b["preset"]["tags"],
        json!(["k8s", "ops"]),
        "duplicate tags dropped"
    );

    let list = omp.ok("presets.list", json!({})).await;
    assert_eq!(names(&list, "presets"), ["k8s-ops", "web-dev"]);
    assert_eq!(list["revision"], 2);
    let by_tag = omp.ok("presets.list", json!({"tag": "web"})).await;
    assert_eq!(names(&by_tag, "presets"), ["web-dev"]);
    let by_name = omp.ok("presets.list", json!({"filter": "k8s"})).await;
    assert_eq!(names(&by_name, "presets"), ["k8s-ops"]);
    let wild = omp.ok("presets.list", json!({"filter": "%"})).await;
    assert_eq!(
        names(&wild, "presets"),
        Vec::<String>::new(),
        "LIKE wildcards are escaped"
    );

    // Available presets: both valid files, the installed one flagged; the
    // broken and badly named files are problems, the .txt is not a preset.
    let all = omp.ok("presets.list", json!({"available": true})).await;
    assert_eq!(names(&all, "available"), ["rust-cli", "web-dev"]);
    assert_eq!(all["available"][1]["installed_version"], "1.0.0");
    assert!(all["available"][0].get("installed_version").is_none());
    let problems: Vec<&str> = all["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| p["path"].as_str().expect("path"))
        .collect();
    assert_eq!(problems.len(), 2, "{all}");
    assert!(
        problems.iter().any(|p| p.ends_with("Bad_Name.yaml"))
            && problems.iter().any(|p| p.ends_with("broken.yaml"))
    );

    // Search: installed and installable, best first.
    let s = omp.ok("presets.search", json!({"query": "web"})).await;
    assert_eq!(names(&s, "results"), ["web-dev"]);
    assert_eq!(
        (
            s["results"][0]["installed"].as_bool(),
            s["results"][0]["available_version"].as_str()
        ),
        (Some(true), Some("1.0.0"))
    );
    let s = omp
        .ok("presets.search", json!({"query": "Rust tools"}))
        .await;
    assert_eq!(names(&s, "results"), ["rust-cli"]);
    assert_eq!(s["results"][0]["installed"], false);
    let s = omp
        .ok(
            "presets.search",
            json!({"query": "rust", "installed_only": true}),
        )
        .await;
    assert_eq!(s["results"], json!([]));
    let s = omp
        .ok(
            "presets.search",
            json!({"query": "ops testing", "limit": 1}),
        )
        .await;
    assert_eq!(names(&s, "results"), ["k8s-ops"], "{s}");

    // A newer file: flagged, then an update; the same again is unchanged.
    place.preset_file("web-dev.yaml", &WEB_DEV.replace("1.0.0", "1.1.0"));
    let all = omp.ok("presets.list", json!({"available": true})).await;
    assert_eq!(all["presets"][1]["update_available"], "1.1.0");
    let u = omp.ok("preset.install", json!({"name": "web-dev"})).await;
    assert_eq!(
        (u["action"].as_str(), u["previous_version"].as_str()),
        (Some("updated"), Some("1.0.0"))
    );
    assert_eq!(u["preset"]["installed_at"], a["preset"]["installed_at"]);
    let same = omp.ok("preset.install", json!({"name": "web-dev"})).await;
    assert_eq!(
        (same["action"].as_str(), same["revision"].as_i64()),
        (Some("unchanged"), Some(3))
    );

    // preset.get: settings as installed, history newest first.
    let g = omp.ok("preset.get", json!({"name": "web-dev"})).await;
    assert_eq!(
        g["settings"],
        json!({"model": "sonnet", "system_prompt": "You are a careful web developer.", "tools": ["bash", "edit"]})
    );
    let h: Vec<(&str, &str)> = g["history"]
        .as_array()
        .expect("history")
        .iter()
        .map(|e| {
            (
                e["action"].as_str().expect("action"),
                e["version"].as_str().expect("version"),
            )
        })
        .collect();
    assert_eq!(h, [("updated", "1.1.0"), ("installed", "1.0.0")]);

    let r = omp.ok("preset.uninstall", json!({"name": "web-dev"})).await;
    assert_eq!(
        r,
        json!({"uninstalled": true, "name": "web-dev", "version": "1.1.0", "revision": 4})
    );
    assert_eq!(omp.names().await, ["k8s-ops"]);
    let g = omp.err("preset.get", json!({"name": "web-dev"})).await;
    assert_eq!(
        (g.0, g.2["error"].as_str()),
        (-32000, Some("preset_not_installed"))
    );
    // The file is still there to install again.
    let again = omp.ok("preset.install", json!({"name": "web-dev"})).await;
    assert_eq!(again["action"], "installed");
    assert!(audit
        .of(kaged_host_core::AuditEvent::StorageDenied)
        .is_empty());
    omp.plugin.shutdown().await;
}

#[tokio::test]
async fn catalog_updated_follows_every_change_and_nothing_else() {
    let place = Place::new();
    place.preset_file("web-dev.yaml", WEB_DEV);
    let (host, audit) = place.host();
    let omp = Omp::launch(&host, &place.presets()).await;
    let mut rx = omp.plugin.notifications();

    omp.ok("preset.install", json!({"name": "web-dev"})).await;
    let n = next_named(&mut rx, "catalog.updated")
        .await
        .expect("catalog.updated after install");
    let u: CatalogUpdated = serde_json::from_value(n.params.expect("params")).expect("shape");
    assert_eq!(
        u,
        CatalogUpdated {
            source: "preset.install".into(),
            action: "installed".into(),
            name: "web-dev".into(),
            version: "1.0.0".into(),
            entries_added: 1,
            entries_updated: 0,
            entries_removed: 0,
            revision: 1,
            total: 1
        }
    );
    // No change, no notification: the next one is the uninstall's.
    let same = omp.ok("preset.install", json!({"name": "web-dev"})).await;
    assert_eq!(same["action"], "unchanged");
    omp.ok("presets.list", json!({"available": true})).await;
    omp.err("preset.uninstall", json!({"name": "nope"})).await;
    omp.ok("preset.uninstall", json!({"name": "web-dev"})).await;
    let n = next_named(&mut rx, "catalog.updated")
        .await
        .expect("catalog.updated after uninstall");
    let u: CatalogUpdated = serde_json::from_value(n.params.expect("params")).expect("shape");
    assert_eq!(
        (u.action.as_str(), u.entries_removed, u.revision, u.total),
        ("uninstalled", 1, 2, 0)
    );
    let seen: Vec<_> = audit.of(kaged_host_core::AuditEvent::Notification);
    assert_eq!(
        seen.len(),
        2,
        "one plugin.notification per change: {seen:?}"
    );
    assert!(seen
        .iter()
        .all(|r| r.data["notification_type"] == "catalog.updated"));
    omp.plugin.shutdown().await;
}

#[tokio::test]
async fn errors_name_what_was_wrong() {
    let place = Place::new();
    place.preset_file("web-dev.yaml", WEB_DEV);
    place.preset_file(
        "broken.yaml",
        "version: 1.0.0\ndescription: no settings key typo\nsetings: {}\n",
    );
    place.preset_file(
        "other.yaml",
        &WEB_DEV.replace("name: web-dev\n", "name: not-other\n"),
    );
    let (host, _audit) = place.host();
    let omp = Omp::launch(&host, &place.presets()).await;
    let spec = json!({"version": "1.0.0", "description": "d"});

    for (method, params, field) in [
        ("preset.install", json!({}), "name"),
        ("preset.install", json!({"name": "../etc/passwd"}), "/name"),
        ("preset.install", json!({"name": "Web"}), "/name"),
        (
            "preset.install",
            json!({"name": "x", "preset": {"name": "y", "version": "1", "description": "d"}}),
            "/preset",
        ),
        (
            "preset.install",
            json!({"name": "x", "preset": {"version": "1", "description": "d", "tags": ["Bad Tag"]}}),
            "tags",
        ),
        (
            "preset.install",
            json!({"name": "x", "preset": {"version": "1", "description": "  "}}),
            "description",
        ),
        (
            "preset.install",
            json!({"name": "x", "preset": spec, "force": true}),
            "force",
        ),
        ("presets.search", json!({"query": " ,; "}), "/query"),
        (
            "presets.search",
            json!({"query": "web", "limit": 0}),
            "/limit",
        ),
        ("presets.search", json!({}), "query"),
        ("presets.list", json!({"tag": "NOT A TAG"}), "/tag"),
        (
            "preset.uninstall",
            json!({"name": "x", "history": 3}),
            "/history",
        ),
        (
            "preset.get",
            json!({"name": "x", "history": 1000}),
            "/history",
        ),
    ] {
        let (code, message, _) = omp.err(method, params.clone()).await;
        assert_eq!(code, -32602, "{method} {params}: {message}");
        assert!(
            message.contains(field),
            "{method} {params}: {message} should name {field}"
        );
    }
    for (params, kind, mention) in [
        (json!({"name": "missing"}), "preset_not_found", "missing"),
        (json!({"name": "broken"}), "preset_invalid", "setings"),
        (json!({"name": "other"}), "preset_invalid", "not-other"),
    ] {
        let (code, message, data) = omp.err("preset.install", params.clone()).await;
        assert_eq!(
            (code, data["error"].as_str()),
            (-32000, Some(kind)),
            "{params}: {message}"
        );
        assert!(
            message.starts_with(kind) && message.contains(mention),
            "{message}"
        );
        assert_eq!(message.lines().count(), 1, "{message}");
    }
    omp.ok("preset.install", json!({"name": "web-dev"})).await;
    let older = json!({"name": "web-dev", "preset": {"version": "0.9.0", "description": "older"}});
    let (code, message, data) = omp.err("preset.install", older.clone()).await;
    assert_eq!(
        (code, data["error"].as_str()),
        (-32000, Some("preset_downgrade")),
        "{message}"
    );
    assert_eq!(data["installed_version"], "1.0.0");
    let mut allowed = older;
    allowed["allow_downgrade"] = json!(true);
    assert_eq!(
        omp.ok("preset.install", allowed).await["preset"]["version"],
        "0.9.0"
    );
    let (code, message, data) = omp
        .err("preset.uninstall", json!({"name": "k8s-ops"}))
        .await;
    assert_eq!(
        (code, data["error"].as_str()),
        (-32000, Some("preset_not_installed")),
        "{message}"
    );
    // A relative preset directory is a config error (-32004).
    let e = omp
        .plugin
        .call(
            "config.update",
            Some(json!({"preset_dir": "presets"})),
            None,
        )
        .await
        .expect_err("relative");
    assert_eq!(e.code(), -32004);
    assert!(e.rpc_error().message.contains("absolute"), "{e:?}");
    omp.plugin.shutdown().await;
}
