//! The settings page served at `/`: plain HTML, CSS and JavaScript compiled
//! into the binary (no build step, no external assets). It renders each
//! plugin's state, restart history and knob panel from the API, and tails
//! the audit stream.

use axum::http::header;
use axum::response::{Html, IntoResponse};
use serde_json::json;

use super::super::lines::is_lifecycle;
use kaged_host_core::audit::AuditEvent;

const INDEX: &str = include_str!("page/index.html");
const CSS: &str = include_str!("page/settings.css");
const JS: &str = include_str!("page/settings.js");

/// The page, with the audit event names (all, and the lifecycle ones) from
/// [`AuditEvent::ALL`] written in, so the page and the daemon share one
/// table of names.
pub fn index_html() -> String {
    let names = json!({
        "all": AuditEvent::ALL.iter().map(|e| e.as_str()).collect::<Vec<_>>(),
        "lifecycle": AuditEvent::ALL
            .iter()
            .filter(|e| is_lifecycle(**e))
            .map(|e| e.as_str())
            .collect::<Vec<_>>(),
    });
    // `</` cannot appear in the JSON of event names, so it cannot end the
    // script element early; escape it anyway.
    INDEX.replace("__AUDIT_EVENTS__", &names.to_string().replace("</", "<\\/"))
}

pub(super) async fn index() -> Html<String> {
    Html(index_html())
}

pub(super) async fn css() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], CSS)
}

pub(super) async fn js() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        JS,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_carries_every_audit_event_name_and_no_placeholder() {
        let html = index_html();
        assert!(!html.contains("__AUDIT_EVENTS__"));
        for e in AuditEvent::ALL {
            assert!(html.contains(&format!("\"{}\"", e.as_str())), "{e}");
        }
        assert!(html.contains("/settings.js") && html.contains("/settings.css"));
        // No external asset: every src/href is a path on this server.
        for attr in ["src=\"http", "href=\"http", "src=\"//", "href=\"//"] {
            assert!(!html.contains(attr), "{attr}");
        }
    }
}
