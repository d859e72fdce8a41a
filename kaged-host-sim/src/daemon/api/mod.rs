//! The daemon's HTTP API on loopback (plugin-host.md § HTTP API), JSON in
//! and out; every error is `{"error": {"code", "message"}}`.
//!
//! Every request, the settings page's included, passes the [`guard`]
//! first: this daemon's `Host`, no foreign `Origin`, the [`token`] (bearer;
//! a subprotocol on a WebSocket upgrade; never a cookie), JSON bodies only;
//! the page's static shell alone is served without the token ([`page`]).
//! `/call/` refuses the methods only the daemon sends ([`reserved`]: 403
//! `reserved_method`). Clients without the token cannot exhaust the
//! daemon: header-read and idle timeouts and connection caps, the oldest
//! unauthenticated connection shed first ([`limits`], [`conns`], served by
//! [`serve`]'s accept loop).
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
//! | `GET /api/v1/pending` | `{"project": "pending"\|"loaded"\|null, "pending": [..]}`: a pending project's consent requests (`daemon::pending`) |
//! | `POST /api/v1/pending/<plugin>/approve\|refuse` | `{"plugin", "installed", "request"}`: a git source fetched and its manifest shown, or installed; or refused |
//! | `GET /` (`/settings.css`, `/settings.js`, `/pending.js`) | the settings page's shell ([`page`]), without the token |

mod cell;
pub mod conns;
mod error;
pub mod guard;
mod handlers;
pub mod limits;
pub mod notifications;
pub mod page;
mod pending;
pub mod reserved;
mod serve;
pub mod token;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::routing::{get, post, put};
use axum::Router;

use super::running::Daemon;
pub use cell::DaemonCell;
pub use error::ApiError;
pub use guard::Guard;
pub use limits::ApiLimits;
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

/// Listen on `addr` with a backlog of [`LISTEN_BACKLOG`](limits::LISTEN_BACKLOG)
/// (the kernel caps it at `net.core.somaxconn`): while the API sheds a
/// flood of connections, the operator's waits there, not dropped.
pub fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(limits::LISTEN_BACKLOG)
}

/// The API's routes over `daemon`, every one behind `guard`.
pub fn router(daemon: Arc<Daemon>, guard: Guard) -> Router {
    router_of(DaemonCell::new(daemon), guard)
}

/// [`router`] serving the daemon in `cell`, which may be swapped.
pub fn router_of(cell: DaemonCell, guard: Guard) -> Router {
    Router::new()
        .route("/", get(page::index))
        .route("/settings.css", get(page::css))
        .route("/settings.js", get(page::js))
        .route("/pending.js", get(page::pending_js))
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
        .route("/api/v1/pending", get(pending::list))
        .route("/api/v1/pending/{plugin}/{action}", post(pending::decide))
        .fallback(handlers::not_found)
        .with_state(cell.clone())
        .layer(axum::middleware::from_fn_with_state(cell, request_id))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(guard),
            guard::gate,
        ))
}

/// The header that names an API request (ADDENDUM §16).
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// Every API request that passed the guard gets an id from the run's
/// sequence (`req_api_<n>`): the audit records its work causes carry it
/// (`kaged_host_core::audit::with_request_id`), a call it makes has it as
/// `_context.request_id`, and the answer says it in `X-Request-Id`.
async fn request_id(
    axum::extract::State(cell): axum::extract::State<DaemonCell>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let id = format!("req_api_{}", cell.get().host().config().request_ids.next());
    let mut resp = kaged_host_core::audit::with_request_id(id.clone(), next.run(req)).await;
    if let Ok(v) = axum::http::HeaderValue::from_str(&id) {
        resp.headers_mut().insert(REQUEST_ID_HEADER, v);
    }
    resp
}

/// Serve the API on `listener`, behind `token` and the listener's port,
/// under the [`ApiLimits`] of this process (its `RLIMIT_NOFILE`) at the
/// host's time scale, until the task is dropped or aborted (an open event
/// stream would keep a graceful end waiting forever).
pub async fn serve(
    daemon: Arc<Daemon>,
    listener: tokio::net::TcpListener,
    token: ApiToken,
) -> std::io::Result<()> {
    let limits = ApiLimits::for_this_process(daemon.host().config().time_scale);
    tracing::info!("API limits: {}", limits.describe());
    serve_with(daemon, listener, token, limits).await
}

/// [`serve`] under `limits`.
pub async fn serve_with(
    daemon: Arc<Daemon>,
    listener: tokio::net::TcpListener,
    token: ApiToken,
    limits: ApiLimits,
) -> std::io::Result<()> {
    serve_cell(DaemonCell::new(daemon), listener, token, limits).await
}

/// [`serve_with`] of the daemon in `cell`, which `up` swaps when a pending
/// project loads.
pub async fn serve_cell(
    cell: DaemonCell,
    listener: tokio::net::TcpListener,
    token: ApiToken,
    limits: ApiLimits,
) -> std::io::Result<()> {
    let guard = Guard::new(token, listener.local_addr()?.port());
    serve::accept_loop(listener, router_of(cell, guard), conns::Conns::new(limits)).await;
    Ok(())
}
