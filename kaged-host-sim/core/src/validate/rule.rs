//! The validation rules: one stable id per rule, with its severity.
//!
//! Rule ids are data: reports, tests and docs name rules by
//! [`Rule::as_str`], never by message text.

crate::names::name_table! {
    /// A manifest validation rule.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Rule {
        /// Every rule, in declaration order.
        const ALL;
        /// The stable id (`knob_binds_to_system_config`).
        fn as_str;
        /// What the rule checks (its doc comment).
        fn description = trim;
        /// The rule with this id.
        fn from_id;
        impl Display;
        columns RuleColumns {
            /// Whether a finding of this rule is an error or a warning.
            severity: Severity,
        }
    }
    /// The text is not one well-formed YAML document.
    YamlSyntax => "yaml_syntax" { severity: Severity::Error },
    /// `kaged-plugin.yaml` could not be read.
    ManifestUnreadable => "manifest_unreadable" { severity: Severity::Error },
    /// The document root is not a mapping.
    NotAMapping => "manifest_not_mapping" { severity: Severity::Error },
    /// A mapping repeats a key.
    DuplicateKey => "duplicate_key" { severity: Severity::Error },
    /// A key the schema does not define (top level, tool entries).
    UnknownKey => "unknown_key" { severity: Severity::Error },
    /// A required field is absent.
    MissingField => "missing_field" { severity: Severity::Error },
    /// A field has the wrong YAML type.
    WrongType => "wrong_type" { severity: Severity::Error },
    /// The SDK's `Manifest` model rejects a manifest no other rule faulted
    /// (a validator gap: the proptests assert it never happens).
    ModelMismatch => "model_mismatch" { severity: Severity::Error },
    /// `name` is not `^[a-z][a-z0-9-]*$` of at most 64 characters.
    NameFormat => "name_format" { severity: Severity::Error },
    /// `name` equals a built-in tool namespace (file, search, code, debug, shell, kaged).
    NameBuiltinNamespace => "name_builtin_namespace" { severity: Severity::Warning },
    /// `version` is not a semantic version.
    VersionSemver => "version_semver" { severity: Severity::Error },
    /// `kaged_api` is not an API version this host speaks (1).
    KagedApiUnsupported => "kaged_api_unsupported" { severity: Severity::Error },
    /// `description` is empty.
    DescriptionEmpty => "description_empty" { severity: Severity::Error },
    /// `description` spans several lines.
    DescriptionMultiline => "description_multiline" { severity: Severity::Error },
    /// `description` is longer than 200 characters.
    DescriptionTooLong => "description_too_long" { severity: Severity::Error },
    /// `homepage` is not an http(s) URL.
    HomepageNotUrl => "homepage_not_url" { severity: Severity::Warning },
    /// `command` is an empty list.
    CommandEmpty => "command_empty" { severity: Severity::Error },
    /// `command[0]` is an empty string.
    CommandExecutableEmpty => "command_executable_empty" { severity: Severity::Error },
    /// A relative `command[0]` leaves the plugin directory (`../`): the
    /// installed copy could not start it (ADDENDUM §14; install refuses it).
    CommandOutsidePluginDir => "command_outside_plugin_dir" { severity: Severity::Warning },
    /// `env` sets a daemon-controlled variable (`KAGED_PLUGIN_NAME`,
    /// `KAGED_PLUGIN_DIR`, `KAGED_API_VERSION`): the host ignores it.
    EnvReserved => "env_reserved" { severity: Severity::Warning },
    /// A capability matches no pattern of the capability grammar.
    CapabilityUnknown => "capability_unknown" { severity: Severity::Error },
    /// A `read:fs:`/`write:fs:`/`exec:` path is not absolute, `config:/` or `project:/`.
    CapabilityPath => "capability_path" { severity: Severity::Error },
    /// The binary of `exec:<binary>:<path>` is empty or malformed.
    CapabilityExecBinary => "capability_exec_binary" { severity: Severity::Error },
    /// The host of `net:<host>:<port>` is malformed.
    CapabilityNetHost => "capability_net_host" { severity: Severity::Error },
    /// The port of `net:<host>:<port>` is not `*` or 1..=65535.
    CapabilityNetPort => "capability_net_port" { severity: Severity::Error },
    /// The same capability is listed twice.
    CapabilityDuplicate => "capability_duplicate" { severity: Severity::Warning },
    /// `net:[]` is listed together with a network grant.
    CapabilityNetConflict => "capability_net_conflict" { severity: Severity::Warning },
    /// A path grant lies strictly inside a writable grant (`write:fs:` or an
    /// `exec:` working directory) of the same root (ADDENDUM §16): whoever
    /// writes the outer path could swap a parent of the inner one.
    CapabilityNestedGrant => "capability_nested_grant" { severity: Severity::Error },
    /// A role is not `observer` or `compactor`.
    RoleUnknown => "role_unknown" { severity: Severity::Error },
    /// A role is listed twice.
    RoleDuplicate => "role_duplicate" { severity: Severity::Warning },
    /// `roles: []` while `hooks` is non-empty: no role may receive the hooks.
    RolesEmptyWithHooks => "roles_empty_with_hooks" { severity: Severity::Warning },
    /// A hook is not one of the four defined hooks.
    HookUnknown => "hook_unknown" { severity: Severity::Error },
    /// A hook is listed twice.
    HookDuplicate => "hook_duplicate" { severity: Severity::Warning },
    /// `roles` has `compactor` but `hooks` lacks `pre_compact`.
    CompactorRequiresPreCompact => "compactor_requires_pre_compact" { severity: Severity::Error },
    /// A tool name is not `^[a-z][a-z0-9_]*$`.
    ToolNameFormat => "tool_name_format" { severity: Severity::Error },
    /// `<plugin>.<tool>` does not match `^[a-z][a-z0-9-]+\.[a-z][a-z0-9_]*$`.
    ToolRegisteredName => "tool_registered_name" { severity: Severity::Error },
    /// Two tools share a name.
    ToolDuplicate => "tool_duplicate" { severity: Severity::Error },
    /// A tool has no `description`.
    ToolDescriptionMissing => "tool_description_missing" { severity: Severity::Warning },
    /// A tool's `parameters_schema` is not a valid JSON Schema.
    ToolSchemaInvalid => "tool_schema_invalid" { severity: Severity::Error },
    /// A tool's `parameters_schema` does not describe an object (`type: object`).
    ToolSchemaNotObject => "tool_schema_not_object" { severity: Severity::Error },
    /// A custom method name breaks the method naming regex.
    MethodNameFormat => "method_name_format" { severity: Severity::Error },
    /// A custom method uses a reserved namespace or a system method name.
    MethodReserved => "method_reserved" { severity: Severity::Error },
    /// A custom method is listed twice.
    MethodDuplicate => "method_duplicate" { severity: Severity::Error },
    /// A custom method equals a prefixed tool name.
    MethodToolCollision => "method_tool_collision" { severity: Severity::Error },
    /// A notification name breaks the method naming regex.
    NotificationNameFormat => "notification_name_format" { severity: Severity::Error },
    /// A notification name uses a reserved namespace.
    NotificationReserved => "notification_reserved" { severity: Severity::Error },
    /// A notification is listed twice.
    NotificationDuplicate => "notification_duplicate" { severity: Severity::Warning },
    /// A schema key with no value whose name holds a space: the rest of an
    /// unquoted text after a comma in a YAML flow mapping.
    SchemaStrayKey => "schema_stray_key" { severity: Severity::Warning },
    /// `config_schema`/`system_config_schema` is not a valid JSON Schema.
    ConfigSchemaInvalid => "config_schema_invalid" { severity: Severity::Error },
    /// `config_schema`/`system_config_schema` does not describe an object.
    ConfigSchemaNotObject => "config_schema_not_object" { severity: Severity::Error },
    /// A property is declared in both config schemas.
    ConfigSchemaOverlap => "config_schema_overlap" { severity: Severity::Error },
    /// A knob name is not `^[a-z][a-z0-9_]*$`.
    KnobNameFormat => "knob_name_format" { severity: Severity::Error },
    /// A knob `type` is not one of the eight knob types.
    KnobTypeUnknown => "knob_type_unknown" { severity: Severity::Error },
    /// A knob `label` is empty or longer than 64 characters.
    KnobLabel => "knob_label" { severity: Severity::Error },
    /// A knob `description` is longer than 280 characters.
    KnobDescriptionTooLong => "knob_description_too_long" { severity: Severity::Error },
    /// A knob field this knob type does not define.
    KnobUnknownField => "knob_unknown_field" { severity: Severity::Warning },
    /// `binds_to` is not of the form `config.<field>`.
    KnobBindsToFormat => "knob_binds_to_format" { severity: Severity::Error },
    /// `binds_to` names a field absent from `config_schema.properties`.
    KnobBindsToUnknownField => "knob_binds_to_unknown_field" { severity: Severity::Error },
    /// `binds_to` names a `system_config_schema` field.
    KnobBindsToSystemConfig => "knob_binds_to_system_config" { severity: Severity::Error },
    /// Two knobs bind the same config field.
    KnobBindsToDuplicate => "knob_binds_to_duplicate" { severity: Severity::Warning },
    /// The knob's type disagrees with its bound config field.
    KnobSchemaMismatch => "knob_schema_mismatch" { severity: Severity::Warning },
    /// `min > max`, `step <= 0` or a negative `max_length`.
    KnobBounds => "knob_bounds" { severity: Severity::Error },
    /// `default` outside `min..=max`, longer than `max_length` or not matching `pattern`.
    KnobDefaultOutOfRange => "knob_default_out_of_range" { severity: Severity::Error },
    /// Enum `values` empty or repeated.
    KnobEnumValues => "knob_enum_values" { severity: Severity::Error },
    /// Enum `default` is not one of `values`.
    KnobDefaultNotInValues => "knob_default_not_in_values" { severity: Severity::Error },
    /// An enum `labels` key is not one of `values`.
    KnobLabelsUnknownValue => "knob_labels_unknown_value" { severity: Severity::Error },
    /// A `model_alias` `filter` is not `any`, `reasoning` or `fast`.
    KnobFilter => "knob_filter" { severity: Severity::Error },
    /// Path `prefixes` empty or not a subset of `project:`, `config:`.
    KnobPrefixes => "knob_prefixes" { severity: Severity::Error },
    /// A path knob `default` does not start with one of its `prefixes`.
    KnobPathDefault => "knob_path_default" { severity: Severity::Error },
    /// A text knob `pattern` is not a valid regex.
    KnobPattern => "knob_pattern" { severity: Severity::Error },
    /// `shutdown_timeout_sec` outside 1..=30.
    ShutdownTimeoutRange => "shutdown_timeout_range" { severity: Severity::Error },
    /// `health_interval_sec` outside 5..=300.
    HealthIntervalRange => "health_interval_range" { severity: Severity::Error },
    /// `hook_timeout_sec` outside 1..=60.
    HookTimeoutRange => "hook_timeout_range" { severity: Severity::Error },
}

/// How serious a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The manifest is invalid.
    Error,
    /// Worth fixing; the manifest is still valid.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}
