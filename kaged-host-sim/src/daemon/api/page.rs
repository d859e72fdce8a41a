//! The settings page served at `/`: plain HTML, CSS and JavaScript compiled
//! into the binary (no build step, no external assets). It renders each
//! plugin's state, restart history and knob panel from the API, and tails
//! the audit stream.
//!
//! The page's shell ([`SHELL`]) is static and holds no data, so it is
//! served without the token (a browser cannot send one when it opens a
//! URL); everything it shows comes from the API with the token. The token
//! reaches the page in the URL's fragment, [`settings_url`]
//! (`http://127.0.0.1:PORT/#token=TOKEN`): a browser never sends a
//! fragment to any server. The page keeps it in `sessionStorage` (this
//! tab, this origin: scheme, host and port), takes it out of the address
//! bar, and sends it as `Authorization: Bearer`, or as a WebSocket
//! subprotocol ([`WS_TOKEN_PREFIX`]) on its notification sockets. No
//! cookie is set: a cookie is not scoped by port and would reach every
//! server on 127.0.0.1. The shell's answers forbid framing and any script,
//! style or connection but its own (`Content-Security-Policy`).

use std::net::SocketAddr;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::super::lines::is_lifecycle;
use super::notifications::PROTOCOL;
use super::token::{ApiToken, WS_TOKEN_PREFIX};
use kaged_host_core::audit::AuditEvent;

const INDEX: &str = include_str!("page/index.html");
const CSS: &str = include_str!("page/settings.css");
const JS: &str = include_str!("page/settings.js");
const PENDING_JS: &str = include_str!("page/pending.js");

/// The paths of the page's static shell, served without the token.
pub const SHELL: [&str; 4] = ["/", "/settings.css", "/settings.js", "/pending.js"];

/// The URL `up` prints for the operator: the page, the token in its
/// fragment.
pub fn settings_url(addr: SocketAddr, token: &ApiToken) -> String {
    format!("http://{addr}/#token={}", token.reveal())
}

/// What the shell's answers carry: no caching, no framing (a page on
/// another port cannot frame the settings page and steer its clicks), no
/// script, style or connection from anywhere but this daemon, no
/// `Referer`.
const SHELL_HEADERS: [(header::HeaderName, &str); 5] = [
    (header::CACHE_CONTROL, "no-store"),
    (
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
         img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    (header::X_FRAME_OPTIONS, "DENY"),
    (header::REFERRER_POLICY, "no-referrer"),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
];

/// The page, with the names it shares with the daemon written in: the
/// audit event names (all, and the lifecycle ones) from
/// [`AuditEvent::ALL`], and the WebSocket subprotocols.
pub fn index_html() -> String {
    let names = json!({
        "all": AuditEvent::ALL.iter().map(|e| e.as_str()).collect::<Vec<_>>(),
        "lifecycle": AuditEvent::ALL
            .iter()
            .filter(|e| is_lifecycle(**e))
            .map(|e| e.as_str())
            .collect::<Vec<_>>(),
        "ws_protocol": PROTOCOL,
        "ws_token_prefix": WS_TOKEN_PREFIX,
    });
    // `</` cannot appear in the JSON of event names, so it cannot end the
    // script element early; escape it anyway.
    INDEX.replace("__DAEMON_NAMES__", &names.to_string().replace("</", "<\\/"))
}

fn shell(content_type: &'static str, body: impl IntoResponse) -> Response {
    let mut resp = ([(header::CONTENT_TYPE, content_type)], body).into_response();
    for (name, value) in SHELL_HEADERS {
        resp.headers_mut()
            .insert(name, header::HeaderValue::from_static(value));
    }
    resp
}

pub(super) async fn index() -> Response {
    shell("text/html; charset=utf-8", index_html())
}

pub(super) async fn css() -> Response {
    shell("text/css; charset=utf-8", CSS)
}

pub(super) async fn js() -> Response {
    shell("text/javascript; charset=utf-8", JS)
}

pub(super) async fn pending_js() -> Response {
    shell("text/javascript; charset=utf-8", PENDING_JS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_carries_every_audit_event_name_and_no_placeholder() {
        let html = index_html();
        assert!(!html.contains("__DAEMON_NAMES__"));
        assert!(html.contains(PROTOCOL) && html.contains(WS_TOKEN_PREFIX));
        for e in AuditEvent::ALL {
            assert!(html.contains(&format!("\"{}\"", e.as_str())), "{e}");
        }
        assert!(html.contains("/settings.js") && html.contains("/settings.css"));
        assert!(html.contains("/pending.js"));
        // No external asset: every src/href is a path on this server.
        for attr in ["src=\"http", "href=\"http", "src=\"//", "href=\"//"] {
            assert!(!html.contains(attr), "{attr}");
        }
    }
}
