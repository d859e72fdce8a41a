//! The audit event names as data: [`AuditEvent`] and its table
//! [`AuditEvent::ALL`], the one place the names are written (see the
//! `audit` module for what the table holds beyond the spec's).

crate::names::name_table! {
    /// An audit event name.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum AuditEvent {
        /// Every event, in table order.
        const ALL;
        /// The event name as written in the log (`plugin.spawned`).
        fn as_str;
        /// When the event is emitted and its data (the doc comment).
        fn description = trim;
        /// The event with this name.
        fn parse;
        impl Display;
    }
    /// Plugin process started (name, version, pid, cage_id; `cage`: bwrap, unavailable or off).
    Spawned => "plugin.spawned",
    /// Handshake completed (name, methods_count, capabilities_count).
    Initialized => "plugin.initialized",
    /// The host called a plugin method (name, method, request_id, user_id, project).
    MethodCalled => "plugin.method_called",
    /// The plugin answered a call (name, method, request_id, duration_ms, success).
    MethodReturned => "plugin.method_returned",
    /// The plugin emitted a notification (name, notification_type).
    Notification => "plugin.notification",
    /// The plugin exceeded the notification rate limit (name, rate).
    NotificationFlood => "plugin.notification_flood",
    /// The plugin had more requests in flight than the host answers at once; the excess is answered -32005 (name, limit). Audited once until it is back under the limit. A kit addition: the spec bounds nothing here and names no event.
    RequestFlood => "plugin.request_flood",
    /// The plugin wrote non-JSON to stdout (name, line cut to 200 chars).
    StdoutNoise => "plugin.stdout_noise",
    /// A health check failed (name, consecutive_failures).
    HealthFail => "plugin.health_fail",
    /// The plugin exited unexpectedly (name, exit_code, signal, last_stderr).
    Crashed => "plugin.crashed",
    /// The plugin exited cleanly (name, exit_code).
    Exited => "plugin.exited",
    /// The host killed the plugin (name, reason).
    Killed => "plugin.killed",
    /// The plugin exceeded its failure limit, or could not be started.
    Failed => "plugin.failed",
    /// Plugin enabled by the operator.
    Enabled => "plugin.enabled",
    /// Plugin disabled by the operator or by failure (name, reason).
    Disabled => "plugin.disabled",
    /// Plugin installed.
    Installed => "plugin.installed",
    /// Plugin upgraded.
    Upgraded => "plugin.upgraded",
    /// Plugin uninstalled.
    Uninstalled => "plugin.uninstalled",
    /// A project being loaded declares a plugin the store lacks: the daemon asks the operator's consent over its API (package, source, version, state). A kit addition: plugin-host.md § Project-load-driven install asks for a consent request and names no event.
    ConsentRequested => "plugin.consent_requested",
    /// The operator refused a project-load install over the API (package, source); the project stays pending. A kit addition, as above.
    InstallDeclined => "plugin.install_declined",
    /// The plugin violated the wire protocol (name, violation_type, detail).
    ProtocolViolation => "plugin.protocol_violation",
    /// The plugin claimed capabilities beyond its manifest in its handshake (name, claimed, allowed, excess). Also, before every start of a store's plugin (ADDENDUM §16), the plugin is not started: its manifest asks more than was consented at install (reason `not_consented`, excess, asked, consented, manifest_sha256, consented_sha256, reconsent: the command that re-consents), or a grant of it reaches the plugin store (reason `covers_store`, excess, paths, store).
    CapabilityOverreach => "plugin.capability_overreach",
    /// Storage access outside the plugin's schema, or a write past its quota (name, sql, method, reason: `quota` for the quota; capability: the one the plugin lacks, when that is why).
    StorageDenied => "plugin.storage_denied",
    /// A lifecycle hook was invoked.
    HookFired => "plugin.hook.fired",
    /// A lifecycle hook returned.
    HookReturned => "plugin.hook.returned",
    /// A lifecycle hook timed out.
    HookTimeout => "plugin.hook.timeout",
    /// A lifecycle hook failed.
    HookFailed => "plugin.hook.failed",
    /// A subagent declared a primary-only hook.
    HookIllegal => "plugin.hook.illegal",
    /// A plugin tool was registered.
    ToolRegistered => "plugin.tool_registered",
    /// Two plugins registered the same tool name.
    ToolNameCollision => "plugin.tool_name_collision",
    /// Two compactors on one agent.
    RoleViolation => "plugin.role_violation",
    /// Config failed schema validation.
    ConfigValidationFailed => "plugin.config_validation_failed",
    /// The operator changed a knob.
    KnobWrite => "plugin.knob_write",
    /// The plugin stopped after `shutdown` (Graceful shutdown; not in the audit table).
    Stopped => "plugin.stopped",
    /// No `initialize` answer in time (handshake table; not in the audit table).
    InitializeTimeout => "plugin.initialize_timeout",
    /// `api_version` mismatch (handshake table; not in the audit table).
    ApiMismatch => "plugin.api_mismatch",
    /// `name` mismatch (handshake table; not in the audit table).
    NameMismatch => "plugin.name_mismatch",
    /// `version` mismatch (the field table's name, ADDENDUM §16; not in the audit table).
    VersionMismatch => "initialize.version_mismatch",
    /// The host was started with `--no-sandbox`, which does not affect plugins: this one runs as `cage` says (name, cage, cage_id; ADDENDUM §13). A kit addition: ADDENDUM §13 asks for a record and names no event.
    NoSandboxIgnored => "plugin.no_sandbox_ignored",
    /// A line over 4 MiB (ADDENDUM §9).
    OversizeMessage => "protocol.oversize_message",
    /// Compactor failure chain, first event (ADDENDUM §5, §9).
    CompactionFailed => "compaction.failed",
    /// Compaction finished (ADDENDUM §5, §9).
    CompactionCompleted => "compaction.completed",
}
