//! `GET /api/v1/plugins/<name>/notifications`: a WebSocket subscribed to
//! one plugin's notifications (plugin-host.md § Notifications, step 2:
//! "Forward to any active WebSocket connections that are subscribed to
//! plugin events for this plugin").
//!
//! The upgrade passes the same [`guard`](super::guard) as every route (the
//! token, this daemon's `Host`, no foreign `Origin`). A browser, which
//! cannot set `Authorization` on an upgrade, offers the subprotocols
//! [`PROTOCOL`] and `kaged.bearer.TOKEN`; the daemon selects [`PROTOCOL`]
//! (never the one holding the token). Each notification the plugin emits
//! (after the rate limit) becomes one text frame:
//!
//! ```json
//! {"plugin": "good", "method": "echo.done", "params": {"n": 1}}
//! ```
//!
//! A subscriber that falls more than the fan-out queue behind gets
//! `{"plugin": "good", "missed": N}` and then the newest. The subscription
//! outlives the plugin's process: after a restart it follows the new one.
//! Frames from the client are ignored; a close ends the subscription.

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::Path;
use axum::response::Response;
use kaged_plugin_protocol::Notification;
use serde_json::json;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use super::cell::Current;

use super::error::ApiError;

/// The subprotocol the notification socket speaks (selected when offered).
pub const PROTOCOL: &str = "kaged.notifications.v1";

/// Upgrade to a WebSocket forwarding `name`'s notifications; 404 for a
/// plugin the daemon does not run. The subscription is taken before the
/// upgrade is answered: whatever the plugin emits once the client holds
/// the socket reaches it.
pub(super) async fn subscribe(
    Current(daemon): Current,
    Path(name): Path<String>,
    ws: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    let rx = daemon.managed(&name)?.sup.notifications();
    Ok(ws
        .protocols([PROTOCOL])
        .on_upgrade(move |socket| forward(name, rx, socket)))
}

/// Forward until the client goes (or the daemon drops the plugin).
async fn forward(name: String, mut rx: broadcast::Receiver<Notification>, mut socket: WebSocket) {
    loop {
        let text = tokio::select! {
            n = rx.recv() => match n {
                Ok(n) => json!({"plugin": name, "method": n.method, "params": n.params}),
                Err(RecvError::Lagged(missed)) => json!({"plugin": name, "missed": missed}),
                Err(RecvError::Closed) => return,
            },
            frame = socket.recv() => match client_gone(frame) {
                true => return,
                false => continue,
            },
        };
        if socket
            .send(Message::Text(text.to_string().into()))
            .await
            .is_err()
        {
            return;
        }
    }
}

/// Whether a frame read from the client means it is gone (closed, an
/// error, or the end of the stream).
fn client_gone(frame: Option<Result<Message, axum::Error>>) -> bool {
    !matches!(frame, Some(Ok(m)) if !matches!(m, Message::Close(_)))
}
