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
//! 3. The token ([`ApiToken`]): `Authorization: Bearer TOKEN`, else the
//!    cookie [`COOKIE`]; missing or wrong is 401.
//!    `GET /?token=TOKEN` (the settings URL `up` prints) answers 303 to
//!    the same URL without `token`, setting the cookie (`HttpOnly;
//!    SameSite=Strict; Path=/`), so the token leaves the address bar.
//! 4. A body (`Content-Length` > 0, or any `Transfer-Encoding`) must be
//!    `Content-Type: application/json`, else 415: a cross-site HTML form
//!    can only send `text/plain`, urlencoded or multipart bodies.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use serde_json::json;

use super::error::ApiError;
use super::token::{ApiToken, COOKIE};

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

    /// The first check a request fails, if any (without the page's
    /// `?token=` exchange: see [`gate`]).
    #[cfg(test)]
    fn check(&self, req: &Request) -> Result<(), Refusal> {
        self.check_address(req)?;
        self.check_token(req.headers())?;
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

    /// The bearer token when sent, else the cookie.
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
            None => cookie(headers, COOKIE),
        };
        match presented {
            None => Err(Refusal::NoToken),
            Some(t) if self.token.matches(&t) => Ok(()),
            Some(_) => Err(Refusal::WrongToken),
        }
    }

    /// `GET /?token=TOKEN` with this daemon's token: the 303 that sets the
    /// cookie and drops `token` from the URL. `Some(Err)` for a wrong one.
    fn exchange(&self, req: &Request) -> Option<Result<Response, Refusal>> {
        if req.method() != Method::GET || req.uri().path() != "/" {
            return None;
        }
        let query = req.uri().query()?;
        let (tokens, rest): (Vec<&str>, Vec<&str>) =
            query.split('&').partition(|p| p.starts_with("token="));
        let token = tokens.first()?.trim_start_matches("token=");
        if !self.token.matches(token) {
            return Some(Err(Refusal::WrongToken));
        }
        let location = match rest.join("&") {
            q if q.is_empty() => "/".to_string(),
            q => format!("/?{q}"),
        };
        let cookie = format!(
            "{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
            self.token.reveal()
        );
        let mut resp = StatusCode::SEE_OTHER.into_response();
        let headers = resp.headers_mut();
        for (name, value) in [(header::LOCATION, location), (header::SET_COOKIE, cookie)] {
            match HeaderValue::from_str(&value) {
                Ok(v) => {
                    headers.insert(name, v);
                }
                Err(_) => return Some(Err(Refusal::WrongToken)),
            }
        }
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        Some(Ok(resp))
    }
}

/// The middleware: every request passes [`Guard`]'s checks or is refused.
pub async fn gate(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let api = req.uri().path().starts_with("/api/");
    if let Err(r) = guard.check_address(&req) {
        return r.into_response(api);
    }
    // The settings URL's `?token=`: exchanged for the cookie even when one
    // is sent already, so the token never stays in the address bar.
    if let Some(exchanged) = guard.exchange(&req) {
        return exchanged.unwrap_or_else(|r| r.into_response(api));
    }
    let checked = guard
        .check_token(req.headers())
        .and_then(|()| check_body_type(req.headers()));
    match checked {
        Ok(()) => next.run(req).await,
        Err(r) => r.into_response(api),
    }
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
    #[error("no API token: send Authorization: Bearer TOKEN (the token `up --token-file FILE` wrote), or open the settings URL `up` printed")]
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

    /// The API's JSON error; a token refusal of the page (`api` false) is
    /// a short HTML page instead, for the person who opened it.
    fn into_response(self, api: bool) -> Response {
        let status = self.status();
        let unauthorized = status == StatusCode::UNAUTHORIZED;
        let mut resp = if unauthorized && !api {
            (status, Html(NEEDS_TOKEN)).into_response()
        } else {
            ApiError {
                status,
                code: json!(self.code()),
                message: self.to_string(),
            }
            .into_response()
        };
        if unauthorized {
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"kaged-host-sim\""),
            );
        }
        resp
    }
}

/// The page a browser gets without the token.
const NEEDS_TOKEN: &str = "<!doctype html>\n<meta charset=\"utf-8\">\n\
<title>kaged-host-sim: token needed</title>\n\
<h1>This page needs the daemon's token</h1>\n\
<p>Open the settings URL that <code>kaged-host-sim up</code> printed \
(<code>settings: http://…/?token=…</code>). The token changes at every start.</p>\n";

/// The value of cookie `name` among the `Cookie` headers.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim().to_string())
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
        assert_eq!(code(&[ok[0], ("cookie", "a=b; kaged_token=abc")]), None);
        assert_eq!(
            code(&[ok[0], ("cookie", "kaged_token=x")]),
            Some("wrong_token")
        );
    }
}
