//! Cases of how the plugin behaves over the run and at its end: storage,
//! notifications, shutdown, stdin EOF and its processes.

use super::case::Level::{Must, Should};
use super::case::{CaseDef, Lane, Per};
use super::kind::Kind;

cases! {
    /// `storage.no_denials` (MUST): no storage access was denied while the plugin
    /// ran.
    STORAGE_NO_DENIALS = CaseDef {
        id: "storage.no_denials",
        title: "No storage access was denied while the plugin ran",
        level: Must,
        spec: "plugin-host.md § Plugin-scoped storage; ADDENDUM §7",
        sentence: "Plugins cannot reference tables outside their schema prefix. Any attempt returns error -32003.",
        per: Per::Plugin,
        kind: Kind::StorageDenied,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `notifications.declared_only` (SHOULD): only declared notifications are
    /// sent.
    NOTIFICATIONS_DECLARED_ONLY = CaseDef {
        id: "notifications.declared_only",
        title: "Only declared notifications are sent",
        level: Should,
        spec: "plugin-host.md § Plugin-declared notifications",
        sentence: "notifications: Notification types the plugin may emit.",
        per: Per::Plugin,
        kind: Kind::NotDeclared,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `notifications.no_flood` (SHOULD): no more than 100 notifications per
    /// second.
    NOTIFICATIONS_NO_FLOOD = CaseDef {
        id: "notifications.no_flood",
        title: "No more than 100 notifications per second",
        level: Should,
        spec: "plugin-host.md § Plugin-declared notifications; ADDENDUM §8",
        sentence: "The daemon drops notifications from a plugin that exceeds 100/sec, logs plugin.notification_flood.",
        per: Per::Plugin,
        kind: Kind::Flood,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `timing.margins` (SHOULD): no answer used more than half of its
    /// budget, nor (a method, tool or hook) more than 1.5 s at any time scale.
    TIMING_MARGINS = CaseDef {
        id: "timing.margins",
        title: "Every method and hook answer comes within half of its budget and within 1.5 s",
        level: Should,
        spec: "plugin-host.md § Lifecycle hooks; ADDENDUM §10",
        sentence: "Hook timeout. Default 10s per hook fire. A timed-out hook is logged (plugin.hook.timeout) and treated as if the plugin returned null; the session continues.",
        per: Per::Plugin,
        kind: Kind::Slow,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `lifecycle.shutdown_exits_zero` (MUST): shutdown leads to exit 0 within
    /// shutdown_timeout_sec.
    LIFECYCLE_SHUTDOWN_EXITS_ZERO = CaseDef {
        id: "lifecycle.shutdown_exits_zero",
        title: "shutdown leads to exit 0 within shutdown_timeout_sec",
        level: Must,
        spec: "plugin-host.md § Graceful shutdown; ADDENDUM §2",
        sentence: "A plugin must then exit with code 0 within shutdown_timeout_sec.",
        per: Per::Plugin,
        kind: Kind::DidNotExit,
        lane: Lane::Barrier,
        start_gate: false,
        rules: &[],
    };

    /// `lifecycle.stdin_eof_exits` (MUST): stdin EOF leads to exit.
    LIFECYCLE_STDIN_EOF_EXITS = CaseDef {
        id: "lifecycle.stdin_eof_exits",
        title: "stdin EOF leads to exit",
        level: Must,
        spec: "ADDENDUM §2",
        sentence: "EOF on the plugin's stdin means the host is gone: the plugin exits.",
        per: Per::Plugin,
        kind: Kind::DidNotExit,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `lifecycle.no_orphans` (MUST): no process of the plugin's group outlives it.
    LIFECYCLE_NO_ORPHANS = CaseDef {
        id: "lifecycle.no_orphans",
        title: "No process of the plugin's group outlives it",
        level: Must,
        spec: "plugin-host.md § Graceful shutdown",
        sentence: "If still alive → SIGKILL.",
        per: Per::Plugin,
        kind: Kind::Orphans,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };
}
