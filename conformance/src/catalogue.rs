//! The case catalogue: every conformance case's stable id, level, spec
//! section and the sentence it checks. This table is the single source for
//! `kaged-conformance list` and `docs/conformance.md`.

use serde::Serialize;

/// How binding the checked rule is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Level {
    /// A failure fails the run.
    #[serde(rename = "MUST")]
    Must,
    /// A failure warns (fails the run only with `--strict`).
    #[serde(rename = "SHOULD")]
    Should,
}

impl Level {
    /// `MUST` or `SHOULD`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
        }
    }
}

/// One case of the catalogue. Cases marked `per` run once per declared
/// method, tool or hook; their ids are `id[name]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CaseDef {
    /// Stable dotted id.
    pub id: &'static str,
    /// One-line title.
    pub title: &'static str,
    /// MUST or SHOULD.
    pub level: Level,
    /// The spec section checked.
    pub spec: &'static str,
    /// The sentence of the spec the case checks.
    pub sentence: &'static str,
    /// What the case is instantiated for, if it is parameterised.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per: Option<&'static str>,
}

macro_rules! case {
    ($id:literal, $level:ident, $spec:literal, $title:literal, $sentence:literal) => {
        CaseDef {
            id: $id,
            title: $title,
            level: Level::$level,
            spec: $spec,
            sentence: $sentence,
            per: None,
        }
    };
    ($id:literal, $level:ident, $spec:literal, $title:literal, $sentence:literal, per $per:literal) => {
        CaseDef {
            id: $id,
            title: $title,
            level: Level::$level,
            spec: $spec,
            sentence: $sentence,
            per: Some($per),
        }
    };
}

/// Every case, in the order the suite runs them.
pub const CATALOGUE: &[CaseDef] = &[
    case!("manifest.valid", Must, "plugin-host.md § Manifest validation", "The manifest validates",
        "Install time — full schema validation. Invalid manifests are rejected; the plugin is not installed."),
    case!("manifest.no_warnings", Should, "plugin-host.md § Manifest validation", "The manifest validates without warnings",
        "The validator emits warnings for type-mismatches."),
    case!("launch.command_exists", Must, "plugin-host.md § Manifest schema; ADDENDUM §3", "command[0] exists and is executable",
        "command[0] is the executable. Relative paths are resolved from the plugin's install directory."),
    case!("launch.starts", Must, "plugin-host.md § Plugin supervisor / Spawn", "The process starts and stays up for the handshake",
        "If any step fails, the plugin is marked failed and an audit event is logged."),
    case!("handshake.silent_before_initialize", Must, "plugin-host.md § Initialization handshake", "Nothing is sent before initialize",
        "The plugin must not send any message before receiving initialize."),
    case!("handshake.answers_in_time", Must, "plugin-host.md § Handshake failure modes", "initialize is answered within the timeout",
        "Plugin does not respond within 10s: Kill, audit plugin.initialize_timeout."),
    case!("handshake.well_formed", Must, "plugin-host.md § Handshake failure modes", "The initialize answer is well-formed JSON-RPC",
        "Response is malformed JSON-RPC: Kill, audit plugin.protocol_violation."),
    case!("handshake.name_matches", Must, "plugin-host.md § initialize response", "name matches the manifest",
        "Must match the manifest's name. Mismatch → daemon kills the plugin."),
    case!("handshake.version_matches", Must, "plugin-host.md § initialize response", "version matches the manifest",
        "Must match the manifest's version. Mismatch → kill."),
    case!("handshake.api_version_matches", Must, "plugin-host.md § initialize response", "api_version equals the daemon's",
        "The API version the plugin implements. Must equal the daemon's api_version."),
    case!("handshake.methods_within_manifest", Should, "plugin-host.md § initialize response; ADDENDUM §1", "Every answered method is declared in the manifest",
        "Must be a subset of the manifest's methods. Extra methods → daemon logs warning, ignores them."),
    case!("handshake.methods_complete", Should, "plugin-host.md § initialize response; ADDENDUM §1", "Every declared method and tool is answered in initialize",
        "Missing methods → daemon logs warning, marks them unavailable."),
    case!("handshake.capabilities_within_manifest", Must, "plugin-host.md § initialize response", "capabilities_used is within the manifest",
        "Must be a subset of the manifest's capabilities. Extra → kill."),
    case!("handshake.no_stdout_noise", Must, "plugin-host.md § Framing", "Nothing but JSON-RPC on stdout",
        "Plugins must not write anything to stdout that is not a JSON-RPC message."),
    case!("protocol.ping", Must, "plugin-host.md § System methods", "ping answers {\"status\": \"ok\"}",
        "Health check. Plugin responds with {\"status\": \"ok\"}."),
    case!("protocol.unknown_method", Must, "plugin-host.md § Error codes", "An unknown method gets -32601",
        "-32601 Method not found: Plugin does not implement the requested method."),
    case!("protocol.not_initialized", Should, "plugin-host.md § initialized notification", "A call before initialized gets -32002",
        "If the daemon sends a call before initialized (it won't), the plugin should return error -32002 (not_initialized)."),
    case!("protocol.batch_rejected", Must, "plugin-host.md § JSON-RPC 2.0 compliance", "A batch gets -32600 with id null and the plugin keeps working",
        "If a batch is received by either side, it is rejected with error code -32600 (invalid request)."),
    case!("protocol.parse_error", Must, "plugin-host.md § Error codes", "Malformed JSON gets -32700 with id null",
        "-32700 Parse error: Malformed JSON."),
    case!("protocol.ids_echoed", Must, "plugin-host.md § JSON-RPC 2.0 compliance", "Response ids echo request ids exactly",
        "Request IDs are monotonically increasing integers, scoped per direction."),
    case!("protocol.concurrent_calls", Must, "plugin-host.md § Testing notes", "10 concurrent calls are all answered",
        "Concurrent calls: Send 10 calls without waiting for responses. Assert all 10 get responses (order may vary)."),
    case!("protocol.no_oversize_lines", Must, "plugin-host.md § Framing", "No line over 4 MiB",
        "Lines exceeding 4 MiB are rejected and the plugin is killed (protocol.oversize_message)."),
    case!("protocol.no_jsonrpc_on_stderr", Must, "plugin-host.md § Framing", "No JSON-RPC messages on stderr",
        "Stderr: Reserved for plugin logs. Plugins must not write JSON-RPC to stderr."),
    case!("methods.answers", Must, "plugin-host.md § Plugin-declared methods; Failure modes", "The method answers within the request timeout",
        "Plugin hangs (no response): Request timeout (30s default).", per "method"),
    case!("methods.tool_valid_args", Must, "ADDENDUM §1; ADR-0023 § PluginCallContext", "The tool, dispatched by an agent, accepts arguments generated from its schema",
        "The host invokes a plugin tool by calling a method whose name is the prefixed tool name. params is the tool's arguments object plus _context.", per "tool"),
    case!("methods.tool_invalid_args", Must, "ADDENDUM §1", "The tool answers -32602 for arguments that break its schema",
        "Arguments that do not satisfy parameters_schema are answered with -32602, whose message names the offending field.", per "tool"),
    case!("hooks.answers", Must, "plugin-host.md § Lifecycle hooks; ADDENDUM §5-6", "The hook answers in time with a shape the spec allows",
        "A timed-out hook is logged (plugin.hook.timeout) and treated as if the plugin returned null.", per "hook"),
    case!("compaction.compactor_contract", Must, "plugin-host.md § Compactor return contract; ADDENDUM §5", "As designated compactor, pre_compact returns a valid CompactorResult",
        "The compactor is responsible for preserving the always-keep set; the daemon enforces this and falls back to drop."),
    case!("storage.no_denials", Must, "plugin-host.md § Plugin-scoped storage; ADDENDUM §7", "No storage access was denied while the plugin ran",
        "Plugins cannot reference tables outside their schema prefix. Any attempt returns error -32003."),
    case!("notifications.declared_only", Should, "plugin-host.md § Plugin-declared notifications", "Only declared notifications are sent",
        "notifications: Notification types the plugin may emit."),
    case!("notifications.no_flood", Should, "plugin-host.md § Plugin-declared notifications; ADDENDUM §8", "No more than 100 notifications per second",
        "The daemon drops notifications from a plugin that exceeds 100/sec, logs plugin.notification_flood."),
    case!("config.update_accepted", Should, "plugin-host.md § System methods", "A valid config.update is accepted",
        "config.update: The plugin's config has changed. Plugin may return an error if the config is invalid."),
    case!("lifecycle.shutdown_exits_zero", Must, "plugin-host.md § Graceful shutdown; ADDENDUM §2", "shutdown leads to exit 0 within shutdown_timeout_sec",
        "A plugin must then exit with code 0 within shutdown_timeout_sec."),
    case!("lifecycle.stdin_eof_exits", Must, "ADDENDUM §2", "stdin EOF leads to exit",
        "EOF on the plugin's stdin means the host is gone: the plugin exits."),
    case!("lifecycle.no_orphans", Must, "plugin-host.md § Graceful shutdown", "No process of the plugin's group outlives it",
        "If still alive → SIGKILL."),
];

/// The catalogue entry with this id (a parameterised id `x[name]` finds `x`).
pub fn find(id: &str) -> Option<&'static CaseDef> {
    let base = id.split('[').next().unwrap_or(id);
    CATALOGUE.iter().find(|c| c.id == base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_dotted_and_sectioned() {
        let mut ids: Vec<&str> = CATALOGUE.iter().map(|c| c.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), CATALOGUE.len());
        for c in CATALOGUE {
            let (group, name) = c.id.split_once('.').expect("dotted id");
            assert!(
                !group.is_empty() && !name.is_empty() && !name.contains('.'),
                "{}",
                c.id
            );
            assert!(!c.spec.is_empty() && !c.sentence.is_empty() && !c.title.is_empty());
        }
        assert_eq!(
            find("methods.answers[presets.list]").map(|c| c.id),
            Some("methods.answers")
        );
    }
}
