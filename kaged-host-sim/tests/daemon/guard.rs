//! `up`'s API is a security boundary (spec §15: "The daemon's API trusts
//! no caller for being on loopback: a token on every route, Host and
//! Origin checked"): raw HTTP against a real `up`, as curl, a browser, a
//! cross-site form or a DNS-rebound page would send it.

use serde_json::{json, Value};

use crate::harness::{plugins, raw, Reply, Up};

/// The settings page's static shell: served without the token.
const SHELL: [&str; 3] = ["/", "/settings.js", "/settings.css"];

/// Every route behind the token, with a body where it takes one.
const ROUTES: [(&str, &str, Option<&str>); 11] = [
    ("GET", "/api/v1/plugins", None),
    ("GET", "/api/v1/plugins/good/history", None),
    ("POST", "/api/v1/plugins/good/call/env.get", Some("{}")),
    ("GET", "/api/v1/plugins/knobs/knobs", None),
    (
        "PUT",
        "/api/v1/plugins/knobs/knobs/retain_every",
        Some(r#"{"value": 5}"#),
    ),
    ("POST", "/api/v1/plugins/good/disable", None),
    ("POST", "/api/v1/plugins/good/enable", None),
    ("POST", "/api/v1/plugins/good/restart", None),
    ("GET", "/api/v1/audit/stream", None),
    ("GET", "/api/v2/nothing", None),
    ("GET", "/favicon.ico", None),
];

pub fn running(up: &Up) -> Value {
    up.wait_plugin("knobs", |p| p["state"] == "running");
    up.wait_plugin("good", |p| p["state"] == "running")
}

/// `method path` with `headers` (and `Content-Type: application/json`
/// when there is a body), `Host` the daemon's address.
pub fn send(
    up: &Up,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Reply {
    let mut h = headers.to_vec();
    if body.is_some() {
        h.push(("Content-Type", "application/json"));
    }
    raw(&up.addr, method, path, Some(&up.addr), &h, body)
}

/// A refusal in the API's error shape with `code`.
pub fn refused(reply: &Reply, status: u16, code: &str) {
    assert_eq!(reply.status, status, "{reply:?}");
    let body = reply.json();
    assert_eq!(body["error"]["code"], code, "{reply:?}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{reply:?}"
    );
}

/// Nothing a refused request asked for happened: `good` runs its first
/// process, no knob was written, no operator action audited.
pub fn nothing_happened(up: &Up, before: &Value) {
    let row = up.plugin("good");
    assert_eq!(
        (&row["state"], &row["pid"]),
        (&json!("running"), &before["pid"])
    );
    for r in up.audit() {
        let event = r["event"].as_str().unwrap_or_default();
        assert!(
            !matches!(
                event,
                "plugin.knob_write" | "plugin.disabled" | "plugin.enabled" | "plugin.stopped"
            ),
            "{r}"
        );
    }
}

#[test]
fn no_token_or_a_wrong_one_is_401_on_every_route() {
    let dir = plugins(&["good", "knobs"]);
    let up = Up::start(dir.path());
    let before = running(&up);
    let wrong = "0".repeat(up.token.len());
    let wrong_bearer = format!("Bearer {wrong}");
    // Cookies are not scoped by port: the daemon reads none, not even one
    // holding the right token.
    let cookie = format!("kaged_token={}", up.token);
    for (method, path, body) in ROUTES {
        let cases: [(&[(&str, &str)], &str); 4] = [
            (&[], "no_token"),
            (&[("Authorization", &wrong_bearer)], "wrong_token"),
            (&[("Cookie", &cookie)], "no_token"),
            (&[("Authorization", &up.token)], "not_bearer"),
        ];
        for (headers, code) in cases {
            let reply = send(&up, method, path, headers, body);
            assert!(reply.header("WWW-Authenticate").is_some(), "{reply:?}");
            refused(&reply, 401, code);
            assert_eq!(reply.header("Set-Cookie"), None, "{reply:?}");
        }
    }
    nothing_happened(&up, &before);
}

#[test]
fn the_bearer_opens_the_api_and_the_printed_url_keeps_the_token_in_its_fragment() {
    let dir = plugins(&["good", "knobs"]);
    let up = Up::start(dir.path());
    running(&up);
    // The token file: mode 0600, the token printed in the settings URL.
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(&up.token_file).expect("the token file");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let text = std::fs::read_to_string(&up.token_file).expect("read the token file");
    assert_eq!(text.trim_end(), up.token);
    assert!(up.token.len() >= 32 && up.token.bytes().all(|b| b.is_ascii_hexdigit()));
    let shown = format!("token: written to {}", up.token_file.display());
    assert!(
        up.seen.iter().any(|l| l.starts_with(&shown)),
        "{:?}",
        up.seen
    );
    // In the fragment, which no browser sends to any server.
    assert_eq!(
        up.settings_url,
        format!("http://{}/#token={}", up.addr, up.token)
    );

    let bearer = format!("Bearer {}", up.token);
    let reply = send(
        &up,
        "GET",
        "/api/v1/plugins",
        &[("Authorization", &bearer)],
        None,
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.header("Set-Cookie"), None, "{reply:?}");

    // The page's shell needs no token and is the same with one; no answer
    // sets a cookie; it may not be framed, nor load or reach anything but
    // this daemon.
    for path in SHELL {
        for headers in [vec![], vec![("Authorization", bearer.as_str())]] {
            let reply = send(&up, "GET", path, &headers, None);
            assert_eq!(reply.status, 200, "{path}: {reply:?}");
            assert_eq!(reply.header("Set-Cookie"), None, "{reply:?}");
            assert_eq!(reply.header("X-Frame-Options"), Some("DENY"));
            assert_eq!(reply.header("Cache-Control"), Some("no-store"));
            let csp = reply.header("Content-Security-Policy").expect("a CSP");
            for directive in [
                "frame-ancestors 'none'",
                "connect-src 'self'",
                "default-src 'none'",
            ] {
                assert!(csp.contains(directive), "{directive} in {csp}");
            }
            assert!(!reply.body.contains(&up.token), "{path}");
        }
    }
    let page = send(&up, "GET", "/", &[], None);
    assert!(page
        .body
        .contains("<title>kaged-host-sim: plugin settings</title>"));
    // The old `?token=` exchange is gone: the page is the page, no cookie,
    // no redirect; on an API route it is no token.
    let reply = send(&up, "GET", &format!("/?token={}", up.token), &[], None);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.header("Set-Cookie"), None, "{reply:?}");
    let reply = send(
        &up,
        "GET",
        &format!("/api/v1/plugins?token={}", up.token),
        &[],
        None,
    );
    refused(&reply, 401, "no_token");
    // Only the shell's GET: a POST there needs the token.
    let reply = send(&up, "POST", "/", &[], None);
    refused(&reply, 401, "no_token");
}

#[test]
fn a_forged_host_or_a_foreign_origin_is_refused() {
    let dir = plugins(&["good", "knobs"]);
    let up = Up::start(dir.path());
    let before = running(&up);
    let port = up.addr.rsplit(':').next().expect("a port").to_string();
    let bearer = format!("Bearer {}", up.token);
    let auth = ("Authorization", bearer.as_str());
    let with_host =
        |host: Option<&str>, path: &str| raw(&up.addr, "POST", path, host, &[auth], None);
    // DNS rebinding: the attacker's name, now resolving to 127.0.0.1.
    for host in [
        "attacker.example".to_string(),
        format!("attacker.example:{port}"),
        format!("127.0.0.1:{}", port.parse::<u16>().expect("port") ^ 1),
        format!("localhost.:{port}"),
    ] {
        for path in ["/api/v1/plugins/good/disable", "/"] {
            refused(&with_host(Some(&host), path), 421, "misdirected");
        }
    }
    refused(
        &with_host(None, "/api/v1/plugins/good/disable"),
        400,
        "no_host",
    );
    for host in [format!("localhost:{port}"), format!("[::1]:{port}")] {
        let reply = raw(
            &up.addr,
            "GET",
            "/api/v1/plugins",
            Some(&host),
            &[auth],
            None,
        );
        assert_eq!(reply.status, 200, "{host}: {reply:?}");
    }

    // A foreign Origin: 403 with the token, on every route, the event
    // stream and a WebSocket upgrade included; `null` is foreign.
    for origin in [
        "http://evil.example",
        "null",
        "https://127.0.0.1:1",
        &format!("http://127.0.0.1.evil.example:{port}"),
        &format!("https://localhost:{port}"),
    ] {
        for (method, path, body) in ROUTES {
            let reply = send(&up, method, path, &[auth, ("Origin", origin)], body);
            refused(&reply, 403, "foreign_origin");
        }
        for path in SHELL {
            let reply = send(&up, "GET", path, &[("Origin", origin)], None);
            refused(&reply, 403, "foreign_origin");
        }
        let upgrade = [
            auth,
            ("Origin", origin),
            ("Upgrade", "websocket"),
            ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ];
        let reply = send(&up, "GET", "/api/v1/audit/stream", &upgrade, None);
        refused(&reply, 403, "foreign_origin");
    }
    for origin in [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ] {
        let reply = send(
            &up,
            "GET",
            "/api/v1/plugins",
            &[auth, ("Origin", &origin)],
            None,
        );
        assert_eq!(reply.status, 200, "{origin}: {reply:?}");
    }
    nothing_happened(&up, &before);
}

#[test]
fn a_body_that_is_not_json_is_415_so_no_cross_site_form_gets_through() {
    let dir = plugins(&["good", "knobs"]);
    let up = Up::start(dir.path());
    let before = running(&up);
    let bearer = format!("Bearer {}", up.token);
    let auth = ("Authorization", bearer.as_str());
    let post = |path: &str, content_type: Option<&str>, body: &str| {
        let mut headers = vec![auth];
        if let Some(t) = content_type {
            headers.push(("Content-Type", t));
        }
        raw(&up.addr, "POST", path, Some(&up.addr), &headers, Some(body))
    };
    // What an HTML form can send cross-site (enctype text/plain crafted to
    // look like JSON, urlencoded, multipart), and no type at all.
    for (content_type, body) in [
        (Some("text/plain"), r#"{"name": "GOOD_FLAG", "x": "="}"#),
        (Some("application/x-www-form-urlencoded"), "name=GOOD_FLAG"),
        (Some("multipart/form-data; boundary=x"), "--x--"),
        (None, r#"{"name": "GOOD_FLAG"}"#),
    ] {
        for path in [
            "/api/v1/plugins/good/call/env.get",
            "/api/v1/plugins/good/disable",
        ] {
            refused(
                &post(path, content_type, body),
                415,
                "unsupported_media_type",
            );
        }
    }
    let reply = raw(
        &up.addr,
        "PUT",
        "/api/v1/plugins/knobs/knobs/retain_every",
        Some(&up.addr),
        &[auth, ("Content-Type", "text/plain")],
        Some(r#"{"value": 5}"#),
    );
    refused(&reply, 415, "unsupported_media_type");
    // Without the token the form is refused before its body is looked at.
    let reply = raw(
        &up.addr,
        "POST",
        "/api/v1/plugins/good/disable",
        Some(&up.addr),
        &[("Content-Type", "text/plain")],
        Some("x=y"),
    );
    refused(&reply, 401, "no_token");
    nothing_happened(&up, &before);
    // JSON with parameters passes.
    let reply = post(
        "/api/v1/plugins/good/call/env.get",
        Some("application/json; charset=utf-8"),
        r#"{"name": "GOOD_FLAG"}"#,
    );
    assert_eq!(reply.status, 200, "{reply:?}");
}
