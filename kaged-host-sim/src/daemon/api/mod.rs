//! The daemon's HTTP API on loopback (plugin-host.md § HTTP API), JSON in
//! and out; every error is `{"error": {"code", "message"}}`.
//!
//! Every request, the settings page's included, passes the [`guard`]
//! first: this daemon's `Host`, no foreign `Origin`, the [`token`] (bearer
//! or cookie), JSON bodies only. `/call/` refuses the methods only the
//! daemon sends ([`reserved`]: 403 `reserved_method`).
//!
//! | route | answer |
//! |---|---|
//! | `GET /api/v1/plugins` | `[{"name", "version", "state", "pid", "restarts", "last_exit", "caged", "refusal"}]` (`refusal`: why it was not started, [`Refusal`](super::Refusal), or `null`) |
//! | `POST /api/v1/plugins/<name>/call/<method>` | the method's result (body = params); a system or reserved method: 403 |
//! | `GET /api/v1/plugins/<name>/knobs` | `{"plugin", "knobs": [..]}`, each with its `value` |
//! | `PUT /api/v1/plugins/<name>/knobs/<knob>` `{"value": V}` | `{"config": ..}`; out of bounds: 422 |
//! | `POST /api/v1/plugins/<name>/enable\|disable\|restart` | the plugin's status |
//! | `GET /api/v1/plugins/<name>/history` | `{"plugin", "history": [..]}`: its last lifecycle audit records |
//! | `GET /api/v1/plugins/<name>/notifications` | a WebSocket: one frame per notification of the plugin ([`notifications`]) |
//! | `GET /api/v1/audit/stream` | server-sent events, one audit record each |
//! | `GET /` | the settings page ([`page`]) |

mod error;
pub mod guard;
mod handlers;
pub mod notifications;
pub mod page;
pub mod reserved;
pub mod token;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::routing::{get, post, put};
use axum::Router;

use super::running::Daemon;
pub use error::ApiError;
pub use guard::Guard;
pub use token::ApiToken;

/// Parse `--listen`: a socket address whose IP is loopback.
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    let addr: SocketAddr = text
        .parse()
        .map_err(|e| format!("--listen {text:?}: not an IP:PORT address ({e})"))?;
    if !addr.ip().is_loopback() {
        return Err(format!(
            "--listen {text}: refusing a non-loopback address; the API binds loopback only \
             (127.0.0.1:PORT or [::1]:PORT)"
        ));
    }
    Ok(addr)
}

/// The API's routes over `daemon`, every one behind `guard`.
pub fn router(daemon: Arc<Daemon>, guard: Guard) -> Router {
    Router::new()
        .route("/", get(page::index))
        .route("/settings.css", get(page::css))
        .route("/settings.js", get(page::js))
        .route("/api/v1/plugins", get(handlers::list))
        .route("/api/v1/plugins/{name}/history", get(handlers::history))
        .route(
            "/api/v1/plugins/{name}/call/{method}",
            post(handlers::call_post).fallback(handlers::call_not_post),
        )
        .route("/api/v1/plugins/{name}/knobs", get(handlers::knobs))
        .route(
            "/api/v1/plugins/{name}/knobs/{knob}",
            put(handlers::write_knob),
        )
        .route(
            "/api/v1/plugins/{name}/notifications",
            get(notifications::subscribe),
        )
        .route("/api/v1/plugins/{name}/{action}", post(handlers::operate))
        .route("/api/v1/audit/stream", get(handlers::audit_stream))
        .fallback(handlers::not_found)
        .with_state(daemon)
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(guard),
            guard::gate,
        ))
}

/// Serve the API on `listener`, behind `token` and the listener's port,
/// until the task is dropped or aborted (an open event stream would keep a
/// graceful end waiting forever).
pub async fn serve(
    daemon: Arc<Daemon>,
    listener: tokio::net::TcpListener,
    token: ApiToken,
) -> std::io::Result<()> {
    let guard = Guard::new(token, listener.local_addr()?.port());
    axum::serve(listener, router(daemon, guard)).await
}
