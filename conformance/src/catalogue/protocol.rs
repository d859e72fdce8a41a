//! Cases of the wire protocol: system methods, JSON-RPC error answers,
//! ids, concurrency and framing.

use super::case::Level::{Must, Should};
use super::case::{CaseDef, Lane, Per};
use super::kind::Kind;

cases! {
    /// `protocol.ping` (MUST): ping answers {"status": "ok"}.
    PROTOCOL_PING = CaseDef {
        id: "protocol.ping",
        title: "ping answers {\"status\": \"ok\"}",
        level: Must,
        spec: "plugin-host.md § System methods",
        sentence: "Health check. Plugin responds with {\"status\": \"ok\"}.",
        per: Per::Plugin,
        kind: Kind::WrongAnswer,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `protocol.unknown_method` (MUST): an unknown method gets -32601.
    PROTOCOL_UNKNOWN_METHOD = CaseDef {
        id: "protocol.unknown_method",
        title: "An unknown method gets -32601",
        level: Must,
        spec: "plugin-host.md § Error codes",
        sentence: "-32601 Method not found: Plugin does not implement the requested method.",
        per: Per::Plugin,
        kind: Kind::WrongAnswer,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `protocol.not_initialized` (SHOULD): a call before initialized gets -32002.
    PROTOCOL_NOT_INITIALIZED = CaseDef {
        id: "protocol.not_initialized",
        title: "A call before initialized gets -32002",
        level: Should,
        spec: "plugin-host.md § initialized notification",
        sentence: "If the daemon sends a call before initialized (it won't), the plugin should return error -32002 (not_initialized).",
        per: Per::Plugin,
        kind: Kind::ProtocolViolation,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `protocol.batch_rejected` (MUST): a batch gets -32600 with id null and the
    /// plugin keeps working.
    PROTOCOL_BATCH_REJECTED = CaseDef {
        id: "protocol.batch_rejected",
        title: "A batch gets -32600 with id null and the plugin keeps working",
        level: Must,
        spec: "plugin-host.md § JSON-RPC 2.0 compliance",
        sentence: "If a batch is received by either side, it is rejected with error code -32600 (invalid request).",
        per: Per::Plugin,
        kind: Kind::ProtocolViolation,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `protocol.parse_error` (MUST): malformed JSON gets -32700 with id null.
    PROTOCOL_PARSE_ERROR = CaseDef {
        id: "protocol.parse_error",
        title: "Malformed JSON gets -32700 with id null",
        level: Must,
        spec: "plugin-host.md § Error codes",
        sentence: "-32700 Parse error: Malformed JSON.",
        per: Per::Plugin,
        kind: Kind::ProtocolViolation,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `protocol.ids_echoed` (MUST): response ids echo request ids exactly.
    PROTOCOL_IDS_ECHOED = CaseDef {
        id: "protocol.ids_echoed",
        title: "Response ids echo request ids exactly",
        level: Must,
        spec: "plugin-host.md § JSON-RPC 2.0 compliance",
        sentence: "Request IDs are monotonically increasing integers, scoped per direction.",
        per: Per::Plugin,
        kind: Kind::ProtocolViolation,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `protocol.concurrent_calls` (MUST): 10 concurrent calls are all answered.
    PROTOCOL_CONCURRENT_CALLS = CaseDef {
        id: "protocol.concurrent_calls",
        title: "10 concurrent calls are all answered",
        level: Must,
        spec: "plugin-host.md § Testing notes",
        sentence: "Concurrent calls: Send 10 calls without waiting for responses. Assert all 10 get responses (order may vary).",
        per: Per::Plugin,
        kind: Kind::Timeout,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `protocol.ping_during_slow_call` (MUST): ping is answered within the
    /// ping timeout while calls are in flight.
    PROTOCOL_PING_DURING_SLOW_CALL = CaseDef {
        id: "protocol.ping_during_slow_call",
        title: "ping is answered in time while calls are in flight",
        level: Must,
        spec: "plugin-host.md § Health checks",
        sentence: "Response {\"status\": \"ok\"} within 5s: Healthy. 3 consecutive health failures: Kill the plugin (SIGTERM → SIGKILL), trigger restart with backoff.",
        per: Per::Plugin,
        kind: Kind::Timeout,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `protocol.no_oversize_lines` (MUST): no line over 4 MiB.
    PROTOCOL_NO_OVERSIZE_LINES = CaseDef {
        id: "protocol.no_oversize_lines",
        title: "No line over 4 MiB",
        level: Must,
        spec: "plugin-host.md § Framing",
        sentence:
            "Lines exceeding 4 MiB are rejected and the plugin is killed (protocol.oversize_message).",
        per: Per::Plugin,
        kind: Kind::ProtocolViolation,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `protocol.no_jsonrpc_on_stderr` (MUST): no JSON-RPC messages on stderr.
    PROTOCOL_NO_JSONRPC_ON_STDERR = CaseDef {
        id: "protocol.no_jsonrpc_on_stderr",
        title: "No JSON-RPC messages on stderr",
        level: Must,
        spec: "plugin-host.md § Framing",
        sentence: "Stderr: Reserved for plugin logs. Plugins must not write JSON-RPC to stderr.",
        per: Per::Plugin,
        kind: Kind::ProtocolViolation,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `protocol.no_answer_to_notifications` (MUST): the plugin answers no
    /// notification (no answer with id null or without an id that no request
    /// prompted).
    PROTOCOL_NO_ANSWER_TO_NOTIFICATIONS = CaseDef {
        id: "protocol.no_answer_to_notifications",
        title: "No answer to a notification",
        level: Must,
        spec: "plugin-host.md § JSON-RPC 2.0 compliance",
        sentence: "Notifications (requests without id) are fire-and-forget. Neither side sends a response to a notification.",
        per: Per::Plugin,
        kind: Kind::ProtocolViolation,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `protocol.no_unknown_response_ids` (MUST): every answer carries the id
    /// of a request the host sent.
    PROTOCOL_NO_UNKNOWN_RESPONSE_IDS = CaseDef {
        id: "protocol.no_unknown_response_ids",
        title: "Every answer carries the id of a request the host sent",
        level: Must,
        spec: "plugin-host.md § JSON-RPC 2.0 compliance",
        sentence: "The wire protocol is JSON-RPC 2.0 per https://www.jsonrpc.org/specification (a response's id is the id of the request it answers).",
        per: Per::Plugin,
        kind: Kind::ProtocolViolation,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `protocol.no_unprompted_batches` (MUST): the plugin sends no JSON
    /// array of its own.
    PROTOCOL_NO_UNPROMPTED_BATCHES = CaseDef {
        id: "protocol.no_unprompted_batches",
        title: "The plugin sends no batch",
        level: Must,
        spec: "plugin-host.md § JSON-RPC 2.0 compliance",
        sentence: "No batched requests. The daemon never sends a JSON array of requests. Plugins must not send batched responses.",
        per: Per::Plugin,
        kind: Kind::ProtocolViolation,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `protocol.request_ids_monotonic` (MUST): the plugin's own requests use
    /// integer ids increasing from 1.
    PROTOCOL_REQUEST_IDS_MONOTONIC = CaseDef {
        id: "protocol.request_ids_monotonic",
        title: "The plugin's request ids are integers increasing from 1",
        level: Must,
        spec: "plugin-host.md § JSON-RPC 2.0 compliance",
        sentence: "Request IDs are monotonically increasing integers, scoped per direction. The daemon's IDs start at 1. The plugin's IDs start at 1.",
        per: Per::Plugin,
        kind: Kind::ProtocolViolation,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };
}
