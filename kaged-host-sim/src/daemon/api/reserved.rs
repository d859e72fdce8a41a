//! The methods `POST /api/v1/plugins/<name>/call/<method>` refuses: what
//! the daemon alone sends (the protocol's system methods — lifecycle,
//! health, `config.update`, `projects.*` — and anything in a reserved
//! namespace: `kaged.*`, which holds the hooks, and `system.*`), and the
//! hooks by their short names. The names come from the protocol's tables
//! ([`methods::SYSTEM_METHODS`], [`names::RESERVED_METHOD_PREFIXES`],
//! [`names::HOOK_NAMES`]); none is listed here.
//!
//! A config goes through the knob route instead, which checks the knob's
//! bounds and `config_schema` before anything is sent.

use axum::http::StatusCode;
use kaged_plugin_protocol::{methods, names};
use serde_json::json;

use super::error::ApiError;

/// Why `method` may not be called through the API, or `None` when it may.
pub fn refused(method: &str) -> Option<String> {
    let what = if methods::SYSTEM_METHODS.contains(&method) {
        "a system method"
    } else if names::RESERVED_METHOD_PREFIXES
        .iter()
        .any(|p| method.starts_with(p))
    {
        "in a namespace reserved to the daemon"
    } else if names::is_hook_name(method) {
        "a hook"
    } else {
        return None;
    };
    Some(format!(
        "{method:?} is {what}: only the daemon sends it, the API does not forward it. \
         To change a plugin's config, write a knob: \
         PUT /api/v1/plugins/<name>/knobs/<knob> with {{\"value\": V}}"
    ))
}

/// [`refused`] as the API's answer: 403 `reserved_method`.
pub fn check(method: &str) -> Result<(), ApiError> {
    match refused(method) {
        None => Ok(()),
        Some(message) => Err(ApiError {
            status: StatusCode::FORBIDDEN,
            code: json!("reserved_method"),
            message,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kaged_plugin_protocol::HookName;

    #[test]
    fn every_system_method_hook_and_reserved_name_is_refused() {
        for m in methods::SYSTEM_METHODS {
            assert!(refused(m).is_some(), "{m}");
        }
        for h in HookName::ALL {
            assert!(refused(h.method()).is_some(), "{h}");
            assert!(refused(h.as_str()).is_some(), "{h}");
        }
        for m in [methods::SYSTEM_RATE_LIMITED, "kaged.storage.query"] {
            assert!(refused(m).is_some(), "{m}");
        }
        let config = refused(methods::CONFIG_UPDATE).unwrap_or_default();
        assert!(config.contains("/knobs/"), "{config}");
        for m in ["env.get", "good.echo", "notes.count"] {
            assert_eq!(refused(m), None, "{m}");
        }
    }
}
