//! A plugin's health under `up`: `ok`, `degraded` (a recent health ping
//! used more than half its budget, or failed; a restart in the failure
//! window) or `failed`, with a one-line summary, in `GET /api/v1/plugins`
//! and on the settings page (issue 47; `kaged_host_core::health`).

use serde_json::{json, Value};

use crate::harness::{plugins, Up};

/// Set the fixture's ping delay.
fn delay(up: &Up, ms: u64) {
    let body = json!({ "ms": ms }).to_string();
    let (status, out) = up.http(
        "POST",
        "/api/v1/plugins/slow-pings/call/pings.delay",
        Some(&body),
    );
    assert_eq!(status, 200, "{out}");
}

#[test]
fn slow_pings_make_a_plugin_degraded_until_they_recover() {
    let dir = plugins(&["slow-pings"]);
    // Time scale 0.2: a ping every second, each with a 1 s budget.
    let up = Up::start(dir.path());
    let row = up.wait_plugin("slow-pings", |p| {
        p["state"] == "running"
            && p["health"]["summary"]
                .as_str()
                .is_some_and(|s| s.contains("health pings answered"))
    });
    assert_eq!(row["health"]["status"], "ok", "{row}");

    // 600 ms of a 1000 ms budget: more than half.
    delay(&up, 600);
    let row = up.wait_plugin("slow-pings", |p| p["health"]["status"] == "degraded");
    let summary = row["health"]["summary"].as_str().unwrap_or_default();
    assert!(
        summary.starts_with("slow: a health ping took")
            && summary.ends_with("of its 1000 ms budget"),
        "{row}"
    );
    assert_eq!(row["state"], "running", "slow is not dead: {row}");

    // Fast again: ok once the recent pings are all fast.
    delay(&up, 0);
    let row: Value = up.wait_plugin("slow-pings", |p| p["health"]["status"] == "ok");
    assert_eq!(row["restarts"], 0, "{row}");
}
