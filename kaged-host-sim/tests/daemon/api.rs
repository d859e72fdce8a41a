//! Every endpoint of the daemon's HTTP API, including bad input.

use std::io::BufRead;

use serde_json::{json, Value};

use crate::harness::{plugins, Up};

fn running(up: &Up) {
    for name in ["good", "knobs"] {
        up.wait_plugin(name, |p| p["state"] == "running");
    }
}

fn seen_configs(up: &Up) -> Value {
    let (status, seen) = up.http("POST", "/api/v1/plugins/knobs/call/knobs.seen", None);
    assert_eq!(status, 200, "{seen}");
    seen["configs"].clone()
}

#[test]
fn list_and_call() {
    let dir = plugins(&["good", "knobs"]);
    let up = Up::start(dir.path());
    running(&up);
    let row = up.plugin("good");
    assert_eq!(row["version"], "1.0.0");
    assert_eq!(row["restarts"], 0);
    assert_eq!(row["caged"], up.caged);
    assert_eq!(row["last_exit"], Value::Null);
    assert!(row["pid"].as_u64().is_some());

    let (status, out) = up.http("POST", "/api/v1/plugins/good/call/env.get", None);
    assert_eq!(status, 200, "{out}");
    let (status, out) = up.http(
        "POST",
        "/api/v1/plugins/good/call/env.get",
        Some(r#"{"name": "GOOD_FLAG"}"#),
    );
    assert_eq!(status, 200, "{out}");
    assert!(out.to_string().contains("yes"), "{out}");

    let err = |status: u16, code: &str, (s, body): (u16, Value)| {
        assert_eq!(s, status, "{body}");
        assert_eq!(body["error"]["code"], code, "{body}");
        assert!(body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
        body
    };
    let body = err(
        400,
        "bad_request",
        up.http("POST", "/api/v1/plugins/good/call/env.get", Some("{")),
    );
    assert!(body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .starts_with("malformed JSON"));
    let body = err(
        404,
        "unknown_plugin",
        up.http("POST", "/api/v1/plugins/nope/call/x", None),
    );
    assert!(body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("nope"));
    err(
        404,
        "unknown_method",
        up.http("POST", "/api/v1/plugins/good/call/no.such", None),
    );
    err(
        400,
        "no_project",
        up.http(
            "POST",
            "/api/v1/plugins/good/call/env.get?agent=primary",
            None,
        ),
    );
    err(404, "not_found", up.http("GET", "/api/v2/nothing", None));
    err(
        404,
        "unknown_action",
        up.http("POST", "/api/v1/plugins/good/explode", None),
    );
}

#[test]
fn knobs_read_write_and_bounds() {
    let dir = plugins(&["good", "knobs"]);
    let up = Up::start(dir.path());
    running(&up);
    let (status, schema) = up.http("GET", "/api/v1/plugins/knobs/knobs", None);
    assert_eq!(status, 200, "{schema}");
    let knob = |schema: &Value, name: &str| {
        schema["knobs"]
            .as_array()
            .and_then(|a| a.iter().find(|k| k["name"] == name).cloned())
            .unwrap_or_else(|| panic!("no knob {name} in {schema}"))
    };
    let retain = knob(&schema, "retain_every");
    assert_eq!(retain["type"], "int_range");
    assert_eq!(retain["fields"]["max"], 20);
    assert_eq!(retain["value"], 3);
    let before = seen_configs(&up);

    let path = "/api/v1/plugins/knobs/knobs/retain_every";
    let (status, body) = up.http("PUT", path, Some(r#"{"value": 50}"#));
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["code"], "out_of_bounds");
    assert_eq!(
        body["error"]["message"],
        "knob retain_every: 50 is above max 20"
    );
    assert_eq!(seen_configs(&up), before, "nothing sent to the plugin");

    let (status, body) = up.http("PUT", path, Some(r#"{"value": 5}"#));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["config"]["retain_every"], 5);
    assert_eq!(body["config"]["recall_budget"], "mid");
    let seen = seen_configs(&up);
    assert_eq!(
        seen.as_array()
            .and_then(|a| a.last())
            .map(|c| &c["retain_every"]),
        Some(&json!(5))
    );
    let (_, schema) = up.http("GET", "/api/v1/plugins/knobs/knobs", None);
    assert_eq!(knob(&schema, "retain_every")["value"], 5);
    let writes: Vec<_> = up
        .audit()
        .into_iter()
        .filter(|r| r["event"] == "plugin.knob_write")
        .collect();
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert_eq!(writes[0]["knob"], "retain_every");
    assert_eq!(writes[0]["value"], 5);

    // The fixture refuses 13: the old config stays in force.
    let (status, body) = up.http("PUT", path, Some(r#"{"value": 13}"#));
    assert_eq!(status, 502, "{body}");
    assert_eq!(body["error"]["code"], "rejected");
    let (_, schema) = up.http("GET", "/api/v1/plugins/knobs/knobs", None);
    assert_eq!(knob(&schema, "retain_every")["value"], 5);

    let bad = |path: &str, body: &str, status: u16, code: &str| {
        let (s, b) = up.http("PUT", path, Some(body));
        assert_eq!(
            (s, b["error"]["code"].as_str()),
            (status, Some(code)),
            "{path} {body}: {b}"
        );
    };
    bad(path, "{", 400, "bad_request");
    // Within the knob's bounds (a text knob without max_length) but not
    // the config schema's (maxLength 5): refused, nothing sent.
    bad(
        "/api/v1/plugins/knobs/knobs/label",
        r#"{"value": "far too long"}"#,
        422,
        "invalid_config",
    );
    assert_eq!(
        seen_configs(&up).as_array().map(Vec::len),
        seen.as_array().map(Vec::len)
    );
    bad(path, r#"{"val": 5}"#, 400, "bad_request");
    bad(
        "/api/v1/plugins/knobs/knobs/nope",
        r#"{"value": 5}"#,
        404,
        "unknown_knob",
    );
    bad(
        "/api/v1/plugins/nope/knobs/x",
        r#"{"value": 5}"#,
        404,
        "unknown_plugin",
    );
    bad(
        &format!("{path}?agent=primary"),
        r#"{"value": 5}"#,
        400,
        "no_project",
    );
    let (s, b) = up.http("GET", "/api/v1/plugins/nope/knobs", None);
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (404, Some("unknown_plugin"))
    );
}

#[test]
fn disable_enable_restart_and_the_audit_stream() {
    let dir = plugins(&["good", "knobs"]);
    let up = Up::start(dir.path());
    running(&up);
    let mut stream = up.open_stream();
    let mut line = String::new();
    stream.read_line(&mut line).expect("status line");
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");

    let (status, row) = up.http("POST", "/api/v1/plugins/good/disable", None);
    assert_eq!(
        (status, row["state"].as_str()),
        (200, Some("disabled")),
        "{row}"
    );
    let (status, body) = up.http("POST", "/api/v1/plugins/good/call/env.get", None);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (502, Some("not_running"))
    );
    let (status, row) = up.http("POST", "/api/v1/plugins/good/enable", None);
    assert_eq!(status, 200, "{row}");
    let row = up.wait_plugin("good", |p| p["state"] == "running");
    let old = row["pid"].clone();
    let (status, body) = up.http("POST", "/api/v1/plugins/good/enable", None);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("already_active")),
        "{body}"
    );
    let (status, _) = up.http("POST", "/api/v1/plugins/good/restart", None);
    assert_eq!(status, 200);
    up.wait_plugin("good", |p| p["state"] == "running" && p["pid"] != old);
    let (status, _) = up.request("POST", "/api/v1/plugins/nope/restart", None);
    assert_eq!(status, 404);

    // The stream saw the disable, the enable and the restart, one audit
    // record per event.
    let mut events: Vec<Value> = Vec::new();
    // Until the restart's spawn: the second `plugin.spawned` since the
    // stream opened (the enable's, then the restart's).
    while events
        .iter()
        .filter(|e| e["event"] == "plugin.spawned")
        .count()
        < 2
    {
        line.clear();
        stream.read_line(&mut line).expect("an event");
        if let Some(data) = line.strip_prefix("data: ") {
            events.push(serde_json::from_str(data.trim_end()).expect("a JSON record"));
        }
    }
    let names: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    for want in [
        "plugin.disabled",
        "plugin.enabled",
        "plugin.spawned",
        "plugin.stopped",
    ] {
        assert!(names.contains(&want), "{want} not in {names:?}");
    }
    assert!(events.iter().all(|e| e["plugin"] == "good"), "{names:?}");
}

#[test]
fn the_settings_page_its_assets_and_the_restart_history() {
    let dir = plugins(&["good"]);
    let up = Up::start(dir.path());
    up.wait_plugin("good", |p| p["state"] == "running");

    let (status, html) = up.request("GET", "/", None);
    assert_eq!(status, 200);
    assert!(
        html.contains("<title>kaged-host-sim: plugin settings</title>"),
        "{html}"
    );
    assert!(
        html.contains("\"plugin.knob_write\""),
        "the event names are written in"
    );
    for (path, needle) in [
        ("/settings.js", "function knobRow"),
        ("/settings.css", ".knob"),
    ] {
        let (status, body) = up.request("GET", path, None);
        assert_eq!(status, 200, "{path}");
        assert!(body.contains(needle), "{path}");
    }

    // The history: the lifecycle records, oldest first; a disable and an
    // enable are added to it.
    let history = |up: &Up| {
        let (status, body) = up.http("GET", "/api/v1/plugins/good/history", None);
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["plugin"], "good");
        body["history"]
            .as_array()
            .expect("a list")
            .iter()
            .map(|r| r["event"].as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(history(&up), ["plugin.spawned", "plugin.initialized"]);
    let (status, _) = up.http("POST", "/api/v1/plugins/good/disable", None);
    assert_eq!(status, 200);
    let (status, _) = up.http("POST", "/api/v1/plugins/good/enable", None);
    assert_eq!(status, 200);
    up.wait_plugin("good", |p| p["state"] == "running");
    let events = history(&up);
    assert_eq!(
        events[2..5],
        ["plugin.exited", "plugin.stopped", "plugin.disabled"].map(String::from),
        "{events:?}"
    );
    assert!(
        events.ends_with(&["plugin.initialized".to_string()]),
        "{events:?}"
    );
    assert!(events.contains(&"plugin.enabled".to_string()), "{events:?}");

    let (status, body) = up.http("GET", "/api/v1/plugins/nope/history", None);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("unknown_plugin"))
    );
}

#[test]
fn a_call_that_times_out_is_answered_like_a_crash() {
    let dir = plugins(&["good"]);
    let up = Up::start(dir.path());
    up.wait_plugin("good", |p| p["state"] == "running");
    let pid = up.plugin("good")["pid"].clone();
    // Answered after a minute: past the request timeout (30 s; 6 s at the
    // harness's time scale 0.2).
    let bearer = up.bearer();
    let reply = crate::harness::raw(
        &up.addr,
        "POST",
        "/api/v1/plugins/good/call/delay.echo",
        Some(&up.addr),
        &[(bearer.0, &bearer.1), ("Content-Type", "application/json")],
        Some(r#"{"ms": 60000}"#),
    );
    let body = reply.json();
    // ADDENDUM §15: like a crash (502), -32603, a message that says so.
    assert_eq!(reply.status, 502, "{body}");
    assert_eq!(body["error"]["code"], -32603, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("timed out"), "{body}");
    // plugin-host.md § Failure modes: killed and restarted, as after a
    // crash; the kill is the request's (ADDENDUM §16: its id).
    let id = reply
        .header("x-request-id")
        .expect("X-Request-Id")
        .to_string();
    let killed = up
        .audit()
        .into_iter()
        .find(|r| r["event"] == "plugin.killed" && r["reason"] == "request_timeout")
        .expect("plugin.killed {reason: request_timeout}");
    assert_eq!(killed["request_id"], id.as_str(), "{killed}");
    let row = up.wait_plugin("good", |p| p["state"] == "running" && p["pid"] != pid);
    assert!(row["restarts"].as_u64() >= Some(1), "{row}");
}

#[test]
fn a_restart_asked_over_the_api_is_that_requests_down_to_the_new_process() {
    // ADDENDUM §16: the records an API request causes carry its id, the
    // new process's `plugin.spawned` and `plugin.initialized` included
    // (emitted by the supervisor's driver, not the request's task).
    let dir = plugins(&["good"]);
    let up = Up::start(dir.path());
    let first = up.wait_plugin("good", |p| p["state"] == "running")["pid"].clone();
    let bearer = up.bearer();
    let reply = crate::harness::raw(
        &up.addr,
        "POST",
        "/api/v1/plugins/good/restart",
        Some(&up.addr),
        &[(bearer.0, &bearer.1)],
        None,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let id = reply
        .header("x-request-id")
        .expect("X-Request-Id")
        .to_string();
    let row = up.wait_plugin("good", |p| p["state"] == "running" && p["pid"] != first);
    let records = up.audit();
    let spawned = records
        .iter()
        .find(|r| r["event"] == "plugin.spawned" && r["pid"] == row["pid"])
        .unwrap_or_else(|| panic!("no spawn of the new process in {records:?}"));
    assert_eq!(spawned["request_id"], id.as_str(), "{spawned}");
    // The new process's handshake: the last one in the log.
    let initialized = records
        .iter()
        .rev()
        .find(|r| r["event"] == "plugin.initialized")
        .expect("plugin.initialized");
    assert_eq!(initialized["request_id"], id.as_str(), "{initialized}");
    // The first start was nobody's request.
    let spawned_first = records
        .iter()
        .find(|r| r["event"] == "plugin.spawned" && r["pid"] == first)
        .expect("the first spawn");
    assert!(spawned_first.get("request_id").is_none(), "{spawned_first}");
}

#[test]
fn plugin_stderr_reaches_the_operational_log_tagged_with_its_name() {
    // plugin-host.md, Transport: "The daemon captures stderr line-by-line
    // into the operational log tagged with the plugin name" (`up`'s stderr).
    let dir = plugins(&["crashes-on-call"]);
    let mut up = Up::start(dir.path());
    up.wait_plugin("crashes-on-call", |p| p["state"] == "running");
    let (status, body) = up.http(
        "POST",
        "/api/v1/plugins/crashes-on-call/call/crash.now",
        None,
    );
    assert_eq!(status, 502, "{body}");
    for n in 0..3 {
        let text = format!("fatal: crash line {n}");
        let line = up.wait_err_line(|l| l.contains(&text));
        assert!(line.contains("plugin=crashes-on-call"), "{line}");
        assert!(line.contains("kaged_plugin_stderr"), "{line}");
    }
}
