//! The API's gate (spec §15: "The daemon's API trusts no caller for being
//! on loopback: a token on every route, Host and Origin checked"). One
//! axum middleware in front of every route, the settings page, its assets
//! and the fallback, checking in this order:
//!
//! 1. `Host` is this daemon's address (`127.0.0.1:PORT`, `localhost:PORT`
//!    or `[::1]:PORT`, PORT the bound port), else 421; no `Host` is 400.
//!    This defeats DNS rebinding: a page on `attacker.example` that
//!    rebinds its name to 127.0.0.1 still sends `Host: attacker.example`.
//! 2. `Origin`, when sent, is this daemon's page (`http://` and one of the
//!    addresses above), else 403 — `Origin: null` included. No `Origin`
//!    (curl, a plugin's own HTTP client) passes on to the token check.
//! 3. The token ([`ApiToken`]): `Authorization: Bearer TOKEN`; on a
//!    WebSocket upgrade, which a browser cannot give headers, the
//!    subprotocol [`WS_TOKEN_PREFIX`]`TOKEN` among those offered instead.
//!    Missing or wrong is 401. No cookie is read or set: cookies are not
//!    scoped by port, so one would reach every loopback server. The
//!    settings page's static shell (`GET /`, `/settings.css`,
//!    `/settings.js`: no data, no secret) is the one thing served without
//!    the token, since a browser cannot send one when opening a URL; the
//!    page takes the token from the URL fragment `#token=` (which no
//!    browser sends to any server) and sends it as a bearer token itself.
//!    A request with the right token marks its connection authenticated
//!    ([`Conn::authenticate`]): never shed to make room.
//! 4. A body (`Content-Length` > 0, or any `Transfer-Encoding`) must be
//!    `Content-Type: application/json`, else 415: a cross-site HTML form
//!    can only send `text/plain`, urlencoded or multipart bodies.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::conns::Conn;
use super::error::ApiError;
use super::page::SHELL;
use super::token::{ApiToken, WS_TOKEN_PREFIX};

/// What every request is checked against: the token and the addresses the
/// daemon answers to.
#[derive(Debug, Clone)]
pub struct Guard {
    token: ApiToken,
    /// The accepted `Host` values (lowercase).
    hosts: Vec<String>,
    /// The accepted `Origin` values (lowercase).
    origins: Vec<String>,
}

impl Guard {
    /// A guard for a daemon listening on loopback port `port`.
    pub fn new(token: ApiToken, port: u16) -> Guard {
        let mut hosts = Vec::new();
        for name in ["127.0.0.1", "localhost", "[::1]"] {
            hosts.push(format!("{name}:{port}"));
            // A browser leaves out the scheme's default port.
            if port == 80 {
                hosts.push(name.to_string());
            }
        }
        let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
        Guard {
            token,
            hosts,
            origins,
        }
    }

    /// The token requests must carry.
    pub fn token(&self) -> &ApiToken {
        &self.token
    }

    /// The first check a request fails, if any.
    #[cfg(test)]
    fn check(&self, req: &Request) -> Result<(), Refusal> {
        self.check_address(req)?;
        if !is_shell(req) {
            self.check_token(req.headers())?;
        }
        check_body_type(req.headers())
    }

    /// `Host`, then `Origin`.
    fn check_address(&self, req: &Request) -> Result<(), Refusal> {
        let headers = req.headers();
        // The `Host` header and, for an absolute-form target or HTTP/2,
        // the request's authority: each present one must be ours.
        let header_host = headers
            .get(header::HOST)
            .map(|h| h.to_str().unwrap_or("<not text>").to_string());
        let authority = req.uri().authority().map(|a| a.as_str().to_string());
        if header_host.is_none() && authority.is_none() {
            return Err(Refusal::NoHost);
        }
        if let Some(h) = [header_host, authority]
            .into_iter()
            .flatten()
            .find(|h| !self.hosts.contains(&h.to_ascii_lowercase()))
        {
            return Err(Refusal::ForeignHost(h));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("<not text>");
            if !self.origins.contains(&origin.to_ascii_lowercase()) {
                return Err(Refusal::ForeignOrigin(origin.to_string()));
            }
        }
        Ok(())
    }

    /// The bearer token; on a WebSocket upgrade without one, the token
    /// subprotocol.
    fn check_token(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let presented = match headers.get(header::AUTHORIZATION) {
            Some(v) => {
                let v = v.to_str().unwrap_or("");
                match v.split_once(' ') {
                    Some((scheme, t)) if scheme.eq_ignore_ascii_case("bearer") => {
                        Some(t.trim().to_string())
                    }
                    _ => return Err(Refusal::NotBearer),
                }
            }
            None if is_upgrade(headers) => subprotocol_token(headers),
            None => None,
        };
        match presented {
            None => Err(Refusal::NoToken),
            Some(t) if self.token.matches(&t) => Ok(()),
            Some(_) => Err(Refusal::WrongToken),
        }
    }
}

/// The middleware: every request passes [`Guard`]'s checks or is refused.
pub async fn gate(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    if let Err(r) = guard.check_address(&req) {
        return r.into_response();
    }
    if !is_shell(&req) {
        if let Err(r) = guard.check_token(req.headers()) {
            return r.into_response();
        }
        if let Some(conn) = req.extensions().get::<Arc<Conn>>() {
            conn.authenticate();
        }
    }
    match check_body_type(req.headers()) {
        Ok(()) => next.run(req).await,
        Err(r) => r.into_response(),
    }
}

/// Whether `req` asks for the page's static shell (served without the
/// token: it holds no data).
fn is_shell(req: &Request) -> bool {
    matches!(*req.method(), Method::GET | Method::HEAD) && SHELL.contains(&req.uri().path())
}

/// Whether the request asks to become a WebSocket.
fn is_upgrade(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::UPGRADE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| {
            v.split(',')
                .any(|p| p.trim().eq_ignore_ascii_case("websocket"))
        })
}

/// The token in the offered subprotocol [`WS_TOKEN_PREFIX`]`TOKEN`.
fn subprotocol_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .find_map(|p| p.trim().strip_prefix(WS_TOKEN_PREFIX))
        .map(str::to_string)
}

/// Why the guard refused a request.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// No `Host` header (and no authority in the request target).
    #[error("the request has no Host header")]
    NoHost,
    /// A `Host` other than this daemon's address.
    #[error("Host {0:?} is not this daemon's address (127.0.0.1, localhost or [::1] and its port): refused, as a DNS-rebound name would be")]
    ForeignHost(String),
    /// An `Origin` other than this daemon's page.
    #[error("Origin {0:?} is not this daemon's settings page: cross-origin requests are refused")]
    ForeignOrigin(String),
    /// No token at all.
    #[error("no API token: send Authorization: Bearer TOKEN (the token `up --token-file FILE` wrote; the settings page: open the URL `up` printed)")]
    NoToken,
    /// An `Authorization` header that is not `Bearer TOKEN`.
    #[error("the Authorization header must be `Bearer TOKEN`")]
    NotBearer,
    /// A token that is not this daemon's.
    #[error("wrong API token (a new one is made at every `up` start: read --token-file again)")]
    WrongToken,
    /// A body that is not JSON.
    #[error("a request body must be Content-Type: application/json (got {})", .0.as_deref().unwrap_or("no Content-Type"))]
    NotJson(Option<String>),
}

impl Refusal {
    fn status(&self) -> StatusCode {
        match self {
            Refusal::NoHost => StatusCode::BAD_REQUEST,
            Refusal::ForeignHost(_) => StatusCode::MISDIRECTED_REQUEST,
            Refusal::ForeignOrigin(_) => StatusCode::FORBIDDEN,
            Refusal::NoToken | Refusal::NotBearer | Refusal::WrongToken => StatusCode::UNAUTHORIZED,
            Refusal::NotJson(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        }
    }

    /// The error code in the API's error shape.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::NoHost => "no_host",
            Refusal::ForeignHost(_) => "misdirected",
            Refusal::ForeignOrigin(_) => "foreign_origin",
            Refusal::NoToken => "no_token",
            Refusal::NotBearer => "not_bearer",
            Refusal::WrongToken => "wrong_token",
            Refusal::NotJson(_) => "unsupported_media_type",
        }
    }

    /// The API's JSON error.
    fn into_response(self) -> Response {
        let status = self.status();
        let mut resp = ApiError {
            status,
            code: json!(self.code()),
            message: self.to_string(),
        }
        .into_response();
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"kaged-host-sim\""),
            );
        }
        resp
    }
}

/// A body must be JSON (parameters such as `; charset=utf-8` allowed).
fn check_body_type(headers: &HeaderMap) -> Result<(), Refusal> {
    let length = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    if length == 0 && !headers.contains_key(header::TRANSFER_ENCODING) {
        return Ok(());
    }
    let given = headers
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap_or("<not text>").to_string());
    let essence = given
        .as_deref()
        .and_then(|t| t.split(';').next())
        .map(str::trim);
    match essence {
        Some(e) if e.eq_ignore_ascii_case("application/json") => Ok(()),
        _ => Err(Refusal::NotJson(given)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(headers: &[(&str, &str)]) -> Request {
        let mut b = Request::builder().method("POST").uri("/api/v1/plugins");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(axum::body::Body::empty()).expect("a request")
    }

    #[test]
    fn each_check_names_what_was_wrong() {
        let g = Guard::new(ApiToken::from_text("abc"), 4242);
        let ok = [("host", "localhost:4242"), ("authorization", "Bearer abc")];
        assert!(g.check(&req(&ok)).is_ok());
        let code = |h: &[(&str, &str)]| g.check(&req(h)).err().map(|r| r.code());
        assert_eq!(code(&[ok[1]]), Some("no_host"));
        assert_eq!(code(&[("host", "evil:4242"), ok[1]]), Some("misdirected"));
        assert_eq!(
            code(&[("host", "localhost:80"), ok[1]]),
            Some("misdirected")
        );
        let absolute = Request::builder()
            .uri("http://attacker.example/api/v1/plugins")
            .header("host", "localhost:4242")
            .header("authorization", "Bearer abc")
            .body(axum::body::Body::empty())
            .expect("a request");
        assert_eq!(
            g.check(&absolute).err().map(|r| r.code()),
            Some("misdirected")
        );
        let with = |extra: (&'static str, &'static str)| [ok[0], ok[1], extra];
        assert_eq!(code(&with(("origin", "null"))), Some("foreign_origin"));
        assert_eq!(code(&with(("origin", "http://[::1]:4242"))), None);
        assert_eq!(
            code(&with(("content-length", "3"))),
            Some("unsupported_media_type")
        );
        let json = [
            ok[0],
            ok[1],
            ("content-length", "3"),
            ("content-type", "application/json; charset=utf-8"),
        ];
        assert_eq!(code(&json), None);
        assert_eq!(code(&[ok[0]]), Some("no_token"));
        assert_eq!(
            code(&[ok[0], ("authorization", "Basic abc")]),
            Some("not_bearer")
        );
        assert_eq!(
            code(&[ok[0], ("authorization", "Bearer abd")]),
            Some("wrong_token")
        );
        // A cookie is no token.
        assert_eq!(
            code(&[ok[0], ("cookie", "kaged_token=abc")]),
            Some("no_token")
        );
        // The WebSocket subprotocol carries it on an upgrade only.
        let offered = (
            "sec-websocket-protocol",
            "kaged.notifications.v1, kaged.bearer.abc",
        );
        assert_eq!(code(&[ok[0], offered]), Some("no_token"));
        assert_eq!(code(&[ok[0], offered, ("upgrade", "websocket")]), None);
        let wrong = ("sec-websocket-protocol", "kaged.bearer.abd");
        assert_eq!(
            code(&[ok[0], wrong, ("upgrade", "websocket")]),
            Some("wrong_token")
        );
        // The page's shell needs no token; anything else there does.
        let get = |path: &str| {
            let r = Request::builder()
                .uri(path)
                .header("host", "localhost:4242")
                .body(axum::body::Body::empty())
                .expect("a request");
            g.check(&r).err().map(|r| r.code())
        };
        assert_eq!(get("/"), None);
        assert_eq!(get("/settings.js"), None);
        assert_eq!(get("/favicon.ico"), Some("no_token"));
    }
}
