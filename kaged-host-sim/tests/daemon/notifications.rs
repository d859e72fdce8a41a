//! The daemon's WebSocket of plugin notifications (plugin-host.md §
//! Notifications, step 2: "Forward to any active WebSocket connections
//! that are subscribed to plugin events for this plugin"), with a real
//! WebSocket client.

use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{http, Error, Message};
use tokio_tungstenite::{connect_async, MaybeTlsStream, WebSocketStream};

use kaged_test_support::command::run_ok;

use crate::harness::{plugins, Up};
use crate::support::host::{shell_adapter_as, LIMIT};

type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// The upgrade request for `plugin`'s notifications, with the bearer
/// token and an `Origin` when given.
fn request(up: &Up, plugin: &str, token: Option<&str>, origin: Option<&str>) -> http::Request<()> {
    let url = format!("ws://{}/api/v1/plugins/{plugin}/notifications", up.addr);
    let mut req = url.into_client_request().expect("a request");
    if let Some(t) = token {
        let value = format!("Bearer {t}").parse().expect("a header value");
        req.headers_mut().insert(http::header::AUTHORIZATION, value);
    }
    if let Some(o) = origin {
        req.headers_mut()
            .insert(http::header::ORIGIN, o.parse().expect("a header value"));
    }
    req
}

async fn subscribe(up: &Up, plugin: &str) -> Socket {
    let (socket, _) = connect_async(request(up, plugin, Some(&up.token), None))
        .await
        .expect("the upgrade is accepted");
    socket
}

/// The next text frame, as JSON (bounded by [`LIMIT`]).
async fn next_json(socket: &mut Socket) -> Value {
    loop {
        let frame = tokio::time::timeout(LIMIT, socket.next())
            .await
            .expect("a frame in time")
            .expect("the socket is open")
            .expect("a frame");
        match frame {
            Message::Text(text) => return serde_json::from_str(&text).expect("JSON"),
            Message::Ping(_) | Message::Pong(_) => continue,
            other => panic!("not a notification: {other:?}"),
        }
    }
}

/// A runtime for the client side (`Up::start` runs outside any runtime).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

#[test]
fn a_plugins_notifications_reach_its_subscribers_and_follow_a_restart() {
    let dir = plugins(&["good", "knobs"]);
    let up = Up::start(dir.path());
    runtime().block_on(notifications_follow_a_restart(&up));
}

async fn notifications_follow_a_restart(up: &Up) {
    up.wait_plugin("good", |p| p["state"] == "running");
    up.wait_plugin("knobs", |p| p["state"] == "running");
    let mut good = subscribe(up, "good").await;
    let mut other = subscribe(up, "knobs").await;

    let (status, body) = up.http(
        "POST",
        "/api/v1/plugins/good/call/notify.emit",
        Some(r#"{"n": 3}"#),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        next_json(&mut good).await,
        json!({"plugin": "good", "method": "echo.done", "params": {"n": 3}})
    );

    // After a restart the subscription follows the new process.
    let old = up.plugin("good")["pid"].clone();
    let (status, _) = up.http("POST", "/api/v1/plugins/good/restart", None);
    assert_eq!(status, 200);
    up.wait_plugin("good", |p| p["state"] == "running" && p["pid"] != old);
    let (status, body) = up.http(
        "POST",
        "/api/v1/plugins/good/call/notify.emit",
        Some(r#"{"n": 4}"#),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(next_json(&mut good).await["params"], json!({"n": 4}));

    // The knobs subscriber heard none of good's: the first thing it reads
    // after its own close is the close's answer.
    other.close(None).await.expect("close");
    let rest: Vec<Message> = other.filter_map(|m| async { m.ok() }).collect().await;
    assert!(
        rest.iter().all(|m| matches!(m, Message::Close(_))),
        "{rest:?}"
    );
}

#[test]
fn the_socket_is_behind_the_token_and_origin_rules_and_names_a_running_plugin() {
    let dir = plugins(&["good"]);
    let up = Up::start(dir.path());
    runtime().block_on(refusals(&up));
}

async fn refusals(up: &Up) {
    up.wait_plugin("good", |p| p["state"] == "running");
    let status = |r: Result<_, Error>| match r {
        Err(Error::Http(resp)) => resp.status().as_u16(),
        Err(e) => panic!("{e}"),
        Ok(_) => 101,
    };
    let no_token = connect_async(request(up, "good", None, None)).await;
    assert_eq!(status(no_token.map(|_| ())), 401);
    let wrong = connect_async(request(up, "good", Some("not-the-token"), None)).await;
    assert_eq!(status(wrong.map(|_| ())), 401);
    let foreign = request(up, "good", Some(&up.token), Some("http://evil.example"));
    assert_eq!(status(connect_async(foreign).await.map(|_| ())), 403);
    let unknown = request(up, "nope", Some(&up.token), None);
    assert_eq!(status(connect_async(unknown).await.map(|_| ())), 404);

    // As a browser sends it (no header of its own on an upgrade): the
    // token as a subprotocol next to the socket's; the daemon selects the
    // socket's, never echoing the token.
    let offering = |token: &str| {
        let mut req = request(up, "good", None, None);
        let offered = format!("kaged.notifications.v1, kaged.bearer.{token}");
        req.headers_mut().insert(
            http::header::SEC_WEBSOCKET_PROTOCOL,
            offered.parse().expect("a header value"),
        );
        req
    };
    let (socket, answer) = connect_async(offering(&up.token))
        .await
        .expect("the upgrade is accepted");
    assert_eq!(
        answer
            .headers()
            .get(http::header::SEC_WEBSOCKET_PROTOCOL)
            .map(|v| v.to_str().expect("text")),
        Some("kaged.notifications.v1")
    );
    drop(socket);
    let wrong = connect_async(offering("not-the-token")).await;
    assert_eq!(status(wrong.map(|_| ())), 401);
    // The subprotocol is a token on an upgrade only.
    let reply = crate::harness::raw(
        &up.addr,
        "GET",
        "/api/v1/plugins",
        Some(&up.addr),
        &[(
            "Sec-WebSocket-Protocol",
            &format!("kaged.bearer.{}", up.token),
        )],
        None,
    );
    assert_eq!(reply.status, 401, "{reply:?}");
}

/// A socket opened while `up` waits on a pending project follows the
/// plugin into the daemon that loads the project: `good` (installed in
/// the store, enabled) runs before and after, and its notifications reach
/// the socket opened before the swap. The socket stayed on the old
/// daemon's plugin, which no longer ran: it heard nothing.
#[test]
fn a_socket_follows_its_plugin_when_a_pending_project_loads() {
    let store = tempfile::tempdir().expect("store");
    run_ok(
        std::process::Command::new(env!("CARGO_BIN_EXE_kaged-host-sim"))
            .args(["plugin", "install", "--yes"])
            .arg(crate::support::host::fixture("good"))
            .arg("--store")
            .arg(store.path()),
    );
    run_ok(
        std::process::Command::new(env!("CARGO_BIN_EXE_kaged-host-sim"))
            .args(["plugin", "enable", "good", "--store"])
            .arg(store.path()),
    );
    let proj = tempfile::tempdir().expect("project");
    shell_adapter_as(&proj.path().join("vendor/local-one"), "local-one");
    let file = proj.path().join("project.yaml");
    std::fs::write(
        &file,
        "primary:\n  plugins:\n    local:\n      package: \"@kaged/local-one\"\n      version: \"^0.1\"\n      source: ./vendor/local-one\n",
    )
    .expect("project");
    let mut up = Up::start_args(&[
        "--store".as_ref(),
        store.path().as_os_str(),
        "--project".as_ref(),
        file.as_os_str(),
    ]);
    up.wait_line(|l| l.starts_with("project: pending: "));
    let old = up.wait_plugin("good", |p| p["state"] == "running")["pid"].clone();
    let rt = runtime();
    let mut socket = rt.block_on(subscribe(&up, "good"));
    let (status, body) = up.http("POST", "/api/v1/pending/local-one/approve", None);
    assert_eq!(status, 200, "{body}");
    up.wait_line(|l| l.starts_with("plugins: ") && l.contains("local-one"));
    up.wait_plugin("good", |p| p["state"] == "running" && p["pid"] != old);
    let (status, body) = up.http(
        "POST",
        "/api/v1/plugins/good/call/notify.emit",
        Some(r#"{"n": 5}"#),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        rt.block_on(next_json(&mut socket)),
        json!({"plugin": "good", "method": "echo.done", "params": {"n": 5}})
    );
}
