//! Cases of the calls a host makes: declared methods and tools, lifecycle
//! hooks, the compactor contract and `config.update`.

use super::case::Level::{Must, Should};
use super::case::{CaseDef, Lane, Per};
use super::kind::Kind;

cases! {
    /// `methods.answers[<method>]` (MUST): the method answers within the request
    /// timeout.
    METHODS_ANSWERS = CaseDef {
        id: "methods.answers",
        title: "The method answers within the request timeout",
        level: Must,
        spec: "plugin-host.md § Plugin-declared methods; Failure modes",
        sentence: "Plugin hangs (no response): Request timeout (30s default).",
        per: Per::MethodOrTool,
        kind: Kind::WrongAnswer,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `methods.tool_valid_args[<tool>]` (MUST): the tool, dispatched by an agent,
    /// accepts arguments generated from its schema.
    METHODS_TOOL_VALID_ARGS = CaseDef {
        id: "methods.tool_valid_args",
        title: "The tool, dispatched by an agent, accepts arguments generated from its schema",
        level: Must,
        spec: "ADDENDUM §1; ADR-0023 § PluginCallContext",
        sentence: "The host invokes a plugin tool by calling a method whose name is the prefixed tool name. params is the tool's arguments object plus _context.",
        per: Per::Tool,
        kind: Kind::WrongAnswer,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `methods.tool_invalid_args[<tool>]` (MUST): the tool answers -32602 for
    /// arguments that break its schema.
    METHODS_TOOL_INVALID_ARGS = CaseDef {
        id: "methods.tool_invalid_args",
        title: "The tool answers -32602 for arguments that break its schema",
        level: Must,
        spec: "ADDENDUM §1",
        sentence: "Arguments that do not satisfy parameters_schema are answered with -32602, whose message names the offending field.",
        per: Per::Tool,
        kind: Kind::WrongAnswer,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `hooks.answers[<hook>]` (MUST): the hook answers in time with a shape the
    /// spec allows.
    HOOKS_ANSWERS = CaseDef {
        id: "hooks.answers",
        title: "The hook answers in time with a shape the spec allows",
        level: Must,
        spec: "plugin-host.md § Lifecycle hooks; ADDENDUM §5-6",
        sentence: "A timed-out hook is logged (plugin.hook.timeout) and treated as if the plugin returned null.",
        per: Per::Hook,
        kind: Kind::WrongAnswer,
        lane: Lane::Own,
        start_gate: false,
        rules: &[(
            Kind::WrongAnswer,
            "ADDENDUM §5: Observer answers: `null`, `{}` or `{retain?: string[], inject?: string}`.",
        )],
    };

    /// `compaction.compactor_contract` (MUST): as designated compactor, pre_compact
    /// returns a valid CompactorResult.
    COMPACTION_COMPACTOR_CONTRACT = CaseDef {
        id: "compaction.compactor_contract",
        title: "As designated compactor, pre_compact returns a valid CompactorResult",
        level: Must,
        spec: "plugin-host.md § Compactor return contract; ADDENDUM §5",
        sentence: "The compactor is responsible for preserving the always-keep set; the daemon enforces this and falls back to drop.",
        per: Per::Plugin,
        kind: Kind::WrongAnswer,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `config.update_accepted` (MUST, ADDENDUM §15): a valid config.update
    /// is answered with a result.
    CONFIG_UPDATE_ACCEPTED = CaseDef {
        id: "config.update_accepted",
        title: "A valid config.update is accepted",
        level: Must,
        spec: "plugin-host.md § System methods; ADDENDUM §15",
        sentence: "System methods are MUST. \"Defined by kaged and implemented by every plugin\": a plugin answers ping, config.update, projects.activated and projects.deactivated with a result.",
        per: Per::Plugin,
        kind: Kind::WrongAnswer,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `config.update_in_handshake_window` (MUST, ADDENDUM §15): a
    /// config.update between the initialize answer and `initialized` is
    /// accepted.
    CONFIG_UPDATE_IN_HANDSHAKE_WINDOW = CaseDef {
        id: "config.update_in_handshake_window",
        title: "A config.update before initialized is accepted",
        level: Must,
        spec: "ADDENDUM §12; ADDENDUM §15 (\"Accepting config.update in the §12 window is MUST\")",
        sentence: "config.update is the one daemon call a plugin must also accept in the window between its initialize answer and initialized (a daemon following Merging literally sends it there); every other call in that window still gets -32002.",
        per: Per::Plugin,
        kind: Kind::WrongAnswer,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `config.invalid_rejected` (SHOULD): a config that breaks
    /// `config_schema` gets -32004.
    CONFIG_INVALID_REJECTED = CaseDef {
        id: "config.invalid_rejected",
        title: "A config.update that breaks config_schema gets -32004",
        level: Should,
        spec: "plugin-host.md § Error codes",
        sentence: "-32004 config_invalid: Plugin rejected a config.update because the config doesn't validate.",
        per: Per::Plugin,
        kind: Kind::WrongAnswer,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `system.projects_activated` (MUST, ADDENDUM §15): `projects.activated`
    /// is answered without error.
    SYSTEM_PROJECTS_ACTIVATED = CaseDef {
        id: "system.projects_activated",
        title: "projects.activated is answered without error",
        level: Must,
        spec: "plugin-host.md § System methods; ADDENDUM §15",
        sentence: "projects.activated daemon → plugin: A project that uses this plugin has been loaded or reloaded. Params: {project: string, config: object}.",
        per: Per::Plugin,
        kind: Kind::WrongAnswer,
        lane: Lane::Shared("projects"),
        start_gate: false,
        rules: &[],
    };

    /// `system.projects_deactivated` (MUST, ADDENDUM §15): `projects.deactivated` is
    /// answered without error.
    SYSTEM_PROJECTS_DEACTIVATED = CaseDef {
        id: "system.projects_deactivated",
        title: "projects.deactivated is answered without error",
        level: Must,
        spec: "plugin-host.md § System methods; ADDENDUM §15",
        sentence: "projects.deactivated daemon → plugin: A project that used this plugin has been unloaded. Params: {project: string}.",
        per: Per::Plugin,
        kind: Kind::WrongAnswer,
        lane: Lane::Shared("projects"),
        start_gate: false,
        rules: &[],
    };
}
