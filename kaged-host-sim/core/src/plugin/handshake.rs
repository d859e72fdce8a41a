//! The `initialize` / `initialized` handshake and every row of "Handshake
//! failure modes".
//!
//! | condition | audit (the session then kills: `plugin.killed`) |
//! |---|---|
//! | message before `initialize` / before the handshake completed | `plugin.protocol_violation` (raised by the reader) |
//! | no answer within 10 s (scaled) | `plugin.initialize_timeout` |
//! | `api_version` mismatch | `plugin.api_mismatch {daemon_api_version, plugin_api_version}` |
//! | `name` mismatch | `plugin.name_mismatch {expected, got}` |
//! | `version` mismatch | `initialize.version_mismatch {expected, got}` |
//! | `capabilities_used` beyond the manifest | `plugin.capability_overreach {claimed, allowed, excess}` |
//! | malformed result, or an error answer | `plugin.protocol_violation` |
//!
//! Methods listed but not declared are ignored (warning); declared methods
//! (custom methods and prefixed tool names, ADDENDUM §1) not listed are
//! marked unavailable (warning).

use std::collections::BTreeSet;
use std::time::Duration;

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::{
    methods, HookName, InitializeParams, InitializeResult, RpcError, API_VERSION,
};
use serde_json::{json, Value};

use crate::observe::audit::AuditEvent;
use crate::plugin::connection::{Connection, Fatal, Phase, RequestError};

/// What the handshake established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeInfo {
    /// The plugin's `initialize` result.
    pub result: InitializeResult,
    /// Declared methods the plugin confirmed (callable).
    pub available_methods: Vec<String>,
    /// Declared methods the plugin did not list (marked unavailable).
    pub unavailable_methods: Vec<String>,
    /// Methods the plugin listed without declaring them (ignored).
    pub extra_methods: Vec<String>,
}

/// A failed handshake; each variant is one row of the failure table.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HandshakeError {
    /// The plugin broke the protocol (spoke first, sent a batch...).
    #[error("protocol violation during the handshake ({reason}): {detail}")]
    ProtocolViolation {
        /// The violation type.
        reason: String,
        /// Details.
        detail: String,
    },
    /// No answer in time.
    #[error("no answer to initialize within {0:?}")]
    Timeout(Duration),
    /// `api_version` differs.
    #[error("api_version mismatch: daemon speaks {daemon}, plugin answered {plugin}")]
    ApiMismatch {
        /// Ours.
        daemon: u32,
        /// Theirs.
        plugin: u32,
    },
    /// `name` differs from the manifest.
    #[error("name mismatch: manifest says {expected:?}, plugin answered {got:?}")]
    NameMismatch {
        /// The manifest's.
        expected: String,
        /// The plugin's.
        got: String,
    },
    /// `version` differs from the manifest.
    #[error("version mismatch: manifest says {expected:?}, plugin answered {got:?}")]
    VersionMismatch {
        /// The manifest's.
        expected: String,
        /// The plugin's.
        got: String,
    },
    /// `capabilities_used` is not a subset of the manifest's capabilities.
    #[error("capability overreach: {excess:?} not in the manifest")]
    CapabilityOverreach {
        /// What the plugin claimed.
        claimed: Vec<String>,
        /// What the manifest allows.
        allowed: Vec<String>,
        /// Claimed but not allowed.
        excess: Vec<String>,
    },
    /// The answer is not a valid `initialize` result.
    #[error("malformed initialize result: {0}")]
    Malformed(String),
    /// The plugin answered `initialize` with an error.
    #[error("initialize answered with an error: {0}")]
    ErrorAnswer(RpcError),
    /// The plugin closed its stdout (exited) before answering.
    #[error("the plugin exited before answering initialize")]
    Exited,
}

impl HandshakeError {
    /// The reason recorded in `plugin.killed`.
    pub fn reason(&self) -> &str {
        match self {
            HandshakeError::ProtocolViolation { reason, .. } => reason,
            HandshakeError::Timeout(_) => "initialize_timeout",
            HandshakeError::ApiMismatch { .. } => "api_mismatch",
            HandshakeError::NameMismatch { .. } => "name_mismatch",
            HandshakeError::VersionMismatch { .. } => "version_mismatch",
            HandshakeError::CapabilityOverreach { .. } => "capability_overreach",
            HandshakeError::Malformed(_) => "malformed_initialize_result",
            HandshakeError::ErrorAnswer(_) => "initialize_error",
            HandshakeError::Exited => "exited",
        }
    }
}

/// Canonical capability form for comparison: whitespace removed, so that
/// `net: []` and `net:[]` are equal.
pub fn canonical_capability(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Run the handshake on `conn` (phase `Spawned`): send `initialize`, check
/// the answer, send `initialized`. Audits the failure row it hits (not
/// `plugin.killed`: the caller kills) or, on success, `plugin.initialized`
/// (`plugin.spawned` was audited when the process started).
pub async fn run(
    conn: &Connection,
    manifest: &Manifest,
    params: InitializeParams,
    timeout: Duration,
) -> Result<HandshakeInfo, HandshakeError> {
    let shared = &conn.shared;
    conn.set_phase(Phase::InitializeSent);
    let params = serde_json::to_value(&params).unwrap_or(Value::Null);
    let answer = tokio::select! {
        r = conn.request(methods::INITIALIZE, Some(params), timeout) => r,
        f = conn.wait_fatal() => return Err(from_fatal(f)),
    };
    let value = match answer {
        Ok(v) => v,
        Err(RequestError::Timeout(d)) => {
            shared.audit(
                AuditEvent::InitializeTimeout,
                json!({"timeout_ms": d.as_millis() as u64}),
            );
            return Err(HandshakeError::Timeout(d));
        }
        Err(RequestError::Rpc(e)) => {
            violation(conn, "initialize_error", e.to_string());
            return Err(HandshakeError::ErrorAnswer(e));
        }
        Err(RequestError::Closed) => {
            return Err(match conn.fatal() {
                Some(f) => from_fatal(f),
                None => HandshakeError::Exited,
            })
        }
        Err(RequestError::Encode(e)) => return Err(HandshakeError::Malformed(e.to_string())),
    };
    let result: InitializeResult = match serde_json::from_value(value) {
        Ok(r) => r,
        Err(e) => {
            violation(conn, "malformed_initialize_result", e.to_string());
            return Err(HandshakeError::Malformed(e.to_string()));
        }
    };
    check(conn, manifest, &result)?;
    let info = methods_check(manifest, result);
    conn.set_phase(Phase::Ready);
    // A failure here means the plugin is gone; the exit is audited elsewhere.
    let _ = conn.notify(methods::INITIALIZED, Some(json!({})));
    shared.audit(
        AuditEvent::Initialized,
        json!({
            "methods_count": info.available_methods.len(),
            "capabilities_count": info.result.capabilities_used.len(),
        }),
    );
    Ok(info)
}

fn from_fatal(f: Fatal) -> HandshakeError {
    HandshakeError::ProtocolViolation {
        reason: f.reason,
        detail: f.detail,
    }
}

fn violation(conn: &Connection, kind: &str, detail: String) {
    conn.shared.audit(
        AuditEvent::ProtocolViolation,
        json!({"violation_type": kind, "detail": detail}),
    );
}

fn check(conn: &Connection, m: &Manifest, r: &InitializeResult) -> Result<(), HandshakeError> {
    let audit = |e: AuditEvent, data: Value| conn.shared.audit(e, data);
    if r.api_version != API_VERSION {
        tracing::error!(plugin = %m.name, daemon = API_VERSION, plugin_version = r.api_version, "api_version mismatch");
        audit(
            AuditEvent::ApiMismatch,
            json!({"daemon_api_version": API_VERSION, "plugin_api_version": r.api_version}),
        );
        return Err(HandshakeError::ApiMismatch {
            daemon: API_VERSION,
            plugin: r.api_version,
        });
    }
    if r.name != m.name {
        audit(
            AuditEvent::NameMismatch,
            json!({"expected": m.name, "got": r.name}),
        );
        return Err(HandshakeError::NameMismatch {
            expected: m.name.clone(),
            got: r.name.clone(),
        });
    }
    if r.version != m.version {
        audit(
            AuditEvent::VersionMismatch,
            json!({"expected": m.version, "got": r.version}),
        );
        return Err(HandshakeError::VersionMismatch {
            expected: m.version.clone(),
            got: r.version.clone(),
        });
    }
    let allowed = m.capability_strings();
    let allowed_set: BTreeSet<String> = allowed.iter().map(|c| canonical_capability(c)).collect();
    let excess: Vec<String> = r
        .capabilities_used
        .iter()
        .filter(|c| !allowed_set.contains(&canonical_capability(c)))
        .cloned()
        .collect();
    if !excess.is_empty() {
        audit(
            AuditEvent::CapabilityOverreach,
            json!({"claimed": r.capabilities_used, "allowed": allowed, "excess": excess}),
        );
        return Err(HandshakeError::CapabilityOverreach {
            claimed: r.capabilities_used.clone(),
            allowed,
            excess,
        });
    }
    Ok(())
}

fn methods_check(m: &Manifest, result: InitializeResult) -> HandshakeInfo {
    let declared = m.declared_methods();
    let listed: BTreeSet<&str> = result.methods.iter().map(String::as_str).collect();
    let hooks: Vec<&str> = HookName::ALL.iter().map(|h| h.method()).collect();
    let extra: Vec<String> = result
        .methods
        .iter()
        .filter(|x| {
            !declared.contains(x)
                && !methods::SYSTEM_METHODS.contains(&x.as_str())
                && !hooks.contains(&x.as_str())
        })
        .cloned()
        .collect();
    let (available, unavailable): (Vec<String>, Vec<String>) = declared
        .into_iter()
        .partition(|d| listed.contains(d.as_str()));
    if !extra.is_empty() {
        tracing::warn!(plugin = %m.name, extra = %extra.join(", "), "initialize lists undeclared methods; ignored");
    }
    if !unavailable.is_empty() {
        tracing::warn!(plugin = %m.name, unavailable = %unavailable.join(", "), "declared methods missing from initialize; marked unavailable");
    }
    HandshakeInfo {
        result,
        available_methods: available,
        unavailable_methods: unavailable,
        extra_methods: extra,
    }
}
