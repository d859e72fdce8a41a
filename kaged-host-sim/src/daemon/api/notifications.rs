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
//! outlives the plugin's process: after a restart it follows the new one;
//! when `up` loads a pending project (a new daemon), it follows that
//! daemon's plugin of the same name, and closes (`1001`, going away) when
//! the new daemon does not run one. Frames from the client are ignored; a
//! close ends the subscription.

use std::sync::{Arc, Weak};

use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::Response;
use kaged_plugin_protocol::Notification;
use serde_json::json;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;

use super::super::running::Daemon;
use super::cell::{Current, DaemonCell};

use super::error::ApiError;

/// The subprotocol the notification socket speaks (selected when offered).
pub const PROTOCOL: &str = "kaged.notifications.v1";

/// Upgrade to a WebSocket forwarding `name`'s notifications; 404 for a
/// plugin the daemon does not run. The subscription is taken before the
/// upgrade is answered: whatever the plugin emits once the client holds
/// the socket reaches it.
pub(super) async fn subscribe(
    State(cell): State<DaemonCell>,
    Current(daemon): Current,
    Path(name): Path<String>,
    ws: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    let rx = daemon.managed(&name)?.sup.notifications();
    let mut daemons = cell.watch();
    // The daemon subscribed to is the one seen; a swap after it wakes the watch.
    daemons.mark_unchanged();
    let watch = Following {
        daemon: Arc::downgrade(&daemon),
        daemons,
        rx,
    };
    Ok(ws
        .protocols([PROTOCOL])
        .on_upgrade(move |socket| forward(name, watch, socket)))
}

/// What a socket forwards from: the daemon it is subscribed to (not kept
/// alive by the socket), the cell's watch, and the plugin's fan-out.
struct Following {
    daemon: Weak<Daemon>,
    daemons: watch::Receiver<Arc<Daemon>>,
    rx: broadcast::Receiver<Notification>,
}

impl Following {
    /// Follow the cell's daemon now (subscribing to its plugin `name` when
    /// it is another than the one followed): `false` when no daemon's
    /// plugin is left to forward from (the new daemon runs none, or the
    /// fan-out followed has closed), and the socket ends.
    fn follows(&mut self, name: &str) -> bool {
        let now = Arc::clone(&self.daemons.borrow_and_update());
        if !Weak::ptr_eq(&Arc::downgrade(&now), &self.daemon) {
            match now.managed(name) {
                Ok(m) => {
                    self.rx = m.sup.notifications();
                    self.daemon = Arc::downgrade(&now);
                }
                Err(_) => return false,
            }
        }
        !self.rx.is_closed()
    }
}

/// Forward until the client goes (or no daemon runs the plugin any more).
async fn forward(name: String, mut from: Following, mut socket: WebSocket) {
    loop {
        let text = tokio::select! {
            n = from.rx.recv() => match n {
                Ok(n) => json!({"plugin": name, "method": n.method, "params": n.params}),
                Err(RecvError::Lagged(missed)) => json!({"plugin": name, "missed": missed}),
                // The old daemon's plugin is gone: a swap follows it, if any.
                Err(RecvError::Closed) => match from.follows(&name) {
                    true => continue,
                    false => break,
                },
            },
            changed = from.daemons.changed() => match changed.is_ok() && from.follows(&name) {
                true => continue,
                false => break,
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
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code: close_code::AWAY,
            reason: format!("the daemon no longer runs plugin {name}").into(),
        })))
        .await;
}

/// Whether a frame read from the client means it is gone (closed, an
/// error, or the end of the stream).
fn client_gone(frame: Option<Result<Message, axum::Error>>) -> bool {
    !matches!(frame, Some(Ok(m)) if !matches!(m, Message::Close(_)))
}
