//! What a caller holding no token cannot make `up` do, and what even the
//! token holder cannot send through `/call/`: a caged plugin with a
//! loopback `net:` grant (the `api-prober` fixture) is refused like any
//! other caller without the token, which it never sees; the methods only
//! the daemon sends (system methods, hooks, `kaged.*`) never reach a
//! plugin, `config.update` included (knob writes keep their route).

use serde_json::{json, Value};

use crate::guard::{nothing_happened, refused, running, send};
use crate::harness::{plugins, Up};

#[test]
fn calls_are_posts_and_system_methods_never_reach_the_plugin() {
    let dir = plugins(&["good", "knobs"]);
    let up = Up::start(dir.path());
    let before = running(&up);
    let bearer = format!("Bearer {}", up.token);
    let reply = send(
        &up,
        "GET",
        "/api/v1/plugins/good/call/env.get",
        &[("Authorization", &bearer)],
        None,
    );
    refused(&reply, 405, "method_not_allowed");
    assert_eq!(reply.header("Allow"), Some("POST"));

    for method in [
        "config.update",
        "initialize",
        "initialized",
        "shutdown",
        "ping",
        "projects.activated",
        "projects.deactivated",
        "system.rate_limited",
        "kaged.hook.on_session_start",
        "on_session_start",
        "kaged.storage.query",
    ] {
        for plugin in ["knobs", "good"] {
            let (status, body) = up.http(
                "POST",
                &format!("/api/v1/plugins/{plugin}/call/{method}"),
                Some(r#"{"retain_every": 19}"#),
            );
            assert_eq!(
                (status, body["error"]["code"].as_str()),
                (403, Some("reserved_method")),
                "{method}: {body}"
            );
        }
    }
    let (_, body) = up.http(
        "POST",
        "/api/v1/plugins/knobs/call/config.update",
        Some(r#"{"retain_every": 19}"#),
    );
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("/knobs/"),
        "points at the knob route: {message}"
    );

    // The plugins got the handshake's config.update only; no call reached
    // either plugin (the audit records every method call).
    let (status, seen) = up.http("POST", "/api/v1/plugins/knobs/call/knobs.seen", None);
    assert_eq!(status, 200, "{seen}");
    assert_eq!(seen["configs"].as_array().map(Vec::len), Some(1), "{seen}");
    assert_eq!(seen["configs"][0]["retain_every"], 3, "{seen}");
    let called: Vec<Value> = up
        .audit()
        .into_iter()
        .filter(|r| r["event"] == "plugin.method_called")
        .collect();
    let methods: Vec<&str> = called.iter().filter_map(|r| r["method"].as_str()).collect();
    assert_eq!(
        methods,
        ["config.update", "config.update", "knobs.seen"],
        "{called:?}"
    );
    // Those config.updates are the supervisor's, one per plugin right after
    // its handshake (`{}` to `good`, which has no config; ADDENDUM §15): no
    // API request id.
    for update in &called[..2] {
        assert_eq!(update["request_id"], Value::Null, "{called:?}");
    }
    nothing_happened(&up, &before);
}

#[test]
fn a_plugin_with_a_loopback_net_grant_cannot_drive_the_api() {
    let dir = plugins(&["api-prober", "good", "knobs"]);
    let up = Up::start(dir.path());
    let before = running(&up);
    let prober = up.wait_plugin("api-prober", |p| p["state"] == "running");
    assert_eq!(prober["caged"], up.caged, "{prober}");
    if !up.caged {
        eprintln!("(bwrap cannot cage here: the prober runs uncaged; the API answers the same)");
    }
    let (host, port) = up.addr.rsplit_once(':').expect("IP:PORT");
    let port: u16 = port.parse().expect("a port");
    // What the plugin can send: anything but the token, which it never
    // sees (not in its environment, not in its cage).
    let guess = "0".repeat(up.token.len());
    let attempts = [
        format!("GET /api/v1/plugins HTTP/1.1\r\nHost: {}\r\n", up.addr),
        format!("GET /api/v1/audit/stream HTTP/1.1\r\nHost: {}\r\n", up.addr),
        format!("GET /api/v1/plugins/knobs/knobs HTTP/1.1\r\nHost: {}\r\n", up.addr),
        format!("POST /api/v1/plugins/good/disable HTTP/1.1\r\nHost: {}\r\n", up.addr),
        format!(
            "POST /api/v1/plugins/good/disable HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {guess}\r\n",
            up.addr
        ),
        format!(
            "POST /api/v1/plugins/good/call/env.get HTTP/1.1\r\nHost: {}\r\n\
             Content-Type: application/json\r\nContent-Length: 2\r\n",
            up.addr
        ),
    ];
    for attempt in attempts {
        let body = if attempt.contains("Content-Length: 2") {
            "{}"
        } else {
            ""
        };
        let request = format!("{attempt}Connection: close\r\n\r\n{body}");
        let (status, out) = up.http(
            "POST",
            "/api/v1/plugins/api-prober/call/http.send",
            Some(&json!({"host": host, "port": port, "request": request}).to_string()),
        );
        assert_eq!(status, 200, "{out}");
        assert_eq!(out["ok"], true, "the grant reaches the API: {out}");
        assert_eq!(out["status"], 401, "{attempt}: {out}");
        let answer: Value = serde_json::from_str(out["body"].as_str().unwrap_or_default())
            .unwrap_or_else(|e| panic!("not JSON ({e}): {out}"));
        assert!(
            answer["error"]["code"]
                .as_str()
                .is_some_and(|c| c.ends_with("_token")),
            "{answer}"
        );
    }
    nothing_happened(&up, &before);

    // The token is nowhere in a plugin's environment.
    let (status, out) = up.http("POST", "/api/v1/plugins/api-prober/call/env.all", None);
    assert_eq!(status, 200, "{out}");
    let env = out["env"].as_object().expect("an environment");
    assert!(!env.is_empty());
    for (k, v) in env {
        let v = v.as_str().unwrap_or_default();
        assert!(!v.contains(&up.token) && !k.contains(&up.token), "{k}={v}");
    }
}

/// ADDENDUM §16: `X-Kaged-User-Id` is the call's `_context.operator_id`
/// (audited as the call's `user_id`); without it, `operator`; a value
/// that is not 1 to 128 visible ASCII characters is refused, named.
#[test]
fn the_user_id_header_is_the_calls_operator() {
    let dir = plugins(&["good"]);
    let up = Up::start(dir.path());
    up.wait_plugin("good", |p| p["state"] == "running");
    let bearer = format!("Bearer {}", up.token);
    let call = |user: Option<&str>| {
        let mut headers = vec![("Authorization", bearer.as_str())];
        if let Some(u) = user {
            headers.push(("X-Kaged-User-Id", u));
        }
        send(
            &up,
            "POST",
            "/api/v1/plugins/good/call/env.get",
            &headers,
            None,
        )
    };
    assert_eq!(call(Some("alice")).status, 200);
    assert_eq!(call(None).status, 200);
    let users: Vec<Value> = up
        .audit()
        .into_iter()
        .filter(|r| r["event"] == "plugin.method_called" && r["method"] == "env.get")
        .map(|r| r["user_id"].clone())
        .collect();
    assert_eq!(users, [json!("alice"), json!("operator")]);
    let bad = call(Some("two words"));
    refused(&bad, 400, "bad_request");
    assert!(bad.body.contains("X-Kaged-User-Id"), "{}", bad.body);
}

/// ADDENDUM §16: every API request gets an id, answered in `X-Request-Id`;
/// the audit records its work causes carry it (a disable's
/// `plugin.disabled`, the stop it makes), and a call it makes has it as
/// `_context.request_id`. Ids never repeat within the run.
#[test]
fn api_requests_are_answered_with_their_id_and_their_audit_records_carry_it() {
    let dir = plugins(&["good"]);
    let up = Up::start(dir.path());
    up.wait_plugin("good", |p| p["state"] == "running");
    let bearer = format!("Bearer {}", up.token);
    let auth = [("Authorization", bearer.as_str())];
    let call = send(
        &up,
        "POST",
        "/api/v1/plugins/good/call/env.get",
        &auth,
        None,
    );
    assert_eq!(call.status, 200);
    let call_id = call.header("X-Request-Id").expect("an id").to_string();
    assert!(call_id.starts_with("req_api_"), "{call_id}");
    let disable = send(&up, "POST", "/api/v1/plugins/good/disable", &auth, None);
    assert_eq!(disable.status, 200);
    let disable_id = disable.header("X-Request-Id").expect("an id").to_string();
    assert_ne!(call_id, disable_id);
    let audit = up.audit();
    let called = audit
        .iter()
        .find(|r| r["event"] == "plugin.method_called" && r["method"] == "env.get")
        .expect("the call audited");
    assert_eq!(called["request_id"], call_id.as_str(), "{called}");
    for event in ["plugin.disabled", "plugin.stopped"] {
        let r = audit
            .iter()
            .find(|r| r["event"] == event)
            .unwrap_or_else(|| panic!("{event} in {audit:?}"));
        assert_eq!(r["request_id"], disable_id.as_str(), "{r}");
    }
}
