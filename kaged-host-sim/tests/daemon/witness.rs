//! Issue 47's "done when", end to end: a plugin written from the wire
//! protocol alone (`wire-witness`: Python's standard library, none of the
//! kit's helpers) under `up --project` sees `projects.activated` with its
//! project's config, request ids strictly increasing under concurrent
//! calls and pings, its table named with the spec's prefix in the
//! database (`plugin_wire_witness_`), and, having ignored `shutdown` and
//! SIGTERM, is audited `plugin.killed` with the signal.

use std::ffi::OsStr;

use serde_json::{json, Value};

use crate::harness::{plugins, raw, Up};

#[test]
fn a_foreign_plugin_under_up_project_sees_the_daemon_as_the_spec_writes_it() {
    let dir = plugins(&["wire-witness"]);
    let place = tempfile::tempdir().expect("tempdir");
    let project = place.path().join("project.yaml");
    std::fs::write(
        &project,
        "primary:\n  plugins:\n    witness:\n      package: wire-witness\n      config:\n        greeting: ahoy\n",
    )
    .expect("project");
    let db = place.path().join("kaged.sqlite3");
    let mut up = Up::start_global(
        &[OsStr::new("--storage-db"), db.as_os_str()],
        &[
            OsStr::new("--plugins"),
            dir.path().as_os_str(),
            OsStr::new("--project"),
            project.as_os_str(),
        ],
    );
    up.wait_plugin("wire-witness", |p| p["state"] == "running");

    // Loads of concurrent calls while the daemon pings on its own (every
    // second at the harness's time scale), until two pings came in the
    // middle of one.
    let (addr, bearer) = (up.addr.clone(), up.bearer());
    let seen = |up: &Up| {
        let (status, seen) = up.http(
            "POST",
            "/api/v1/plugins/wire-witness/call/witness.seen",
            None,
        );
        assert_eq!(status, 200, "{seen}");
        seen
    };
    let deadline = std::time::Instant::now() + crate::support::host::LIMIT;
    while seen(&up)["pings"].as_u64() < Some(2) {
        assert!(std::time::Instant::now() < deadline, "no pings came");
        std::thread::scope(|s| {
            for t in 0..6 {
                let (addr, bearer) = (&addr, &bearer);
                s.spawn(move || {
                    for n in 0..25 {
                        let body = json!({"n": t * 100 + n}).to_string();
                        let reply = raw(
                            addr,
                            "POST",
                            "/api/v1/plugins/wire-witness/call/witness.echo",
                            Some(addr),
                            &[(bearer.0, &bearer.1), ("Content-Type", "application/json")],
                            Some(&body),
                        );
                        assert_eq!((reply.status, reply.json()), (200, json!(t * 100 + n)));
                    }
                });
            }
        });
    }
    let (status, stored) = up.http(
        "POST",
        "/api/v1/plugins/wire-witness/call/witness.store",
        None,
    );
    assert_eq!(
        (status, &stored),
        (200, &json!({"created": true})),
        "{stored}"
    );
    let seen = seen(&up);

    // projects.activated, with the project's config.
    let activated = seen["activated"].as_array().cloned().unwrap_or_default();
    assert_eq!(activated.len(), 1, "{seen}");
    assert_eq!(activated[0]["config"]["greeting"], "ahoy", "{seen}");
    assert_eq!(
        activated[0]["project"].as_str(),
        Some(place.path().to_str().expect("utf-8")),
        "{seen}"
    );
    // Every request id the daemon sent, in the order it arrived: strictly
    // increasing integers.
    let ids: Vec<i64> = seen["ids"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|v| v.as_i64().expect("an integer id"))
                .collect()
        })
        .unwrap_or_default();
    assert!(ids.len() > 150, "{} ids", ids.len());
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");

    // The table, under the spec's prefix.
    let names: Vec<String> = {
        let conn = rusqlite::Connection::open(&db).expect("the database");
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'plugin%'")
            .expect("prepare");
        let rows = stmt.query_map([], |r| r.get(0)).expect("query");
        rows.map(|r| r.expect("row")).collect()
    };
    assert_eq!(names, ["plugin_wire_witness_notes"]);

    // Shutdown and SIGTERM ignored: killed, with the signal.
    assert_eq!(up.signal_and_wait(rustix::process::Signal::TERM), Some(0));
    let killed: Vec<Value> = up
        .audit()
        .into_iter()
        .filter(|r| r["event"] == "plugin.killed" && r["plugin"] == "wire-witness")
        .collect();
    assert_eq!(killed.len(), 1, "{killed:?}");
    assert_eq!(killed[0]["via"], "sigkill", "{}", killed[0]);
    assert_eq!(killed[0]["reason"], "shutdown_timeout", "{}", killed[0]);
}
