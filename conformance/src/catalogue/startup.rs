//! Cases of the start: the manifest validates, the command starts (in its
//! cage), and the `initialize` handshake is what the spec asks.

use super::case::Level::{Must, Should};
use super::case::{CaseDef, Lane, Per};
use super::kind::Kind;

/// The most tools `manifest.tool_count` lets a plugin declare: every tool
/// an agent gets is in its model's tool list, and one plugin should not
/// fill that budget (the cap peer-hermit suggests).
pub const MAX_TOOLS: usize = 64;

cases! {
    /// `manifest.valid` (MUST): the manifest validates.
    MANIFEST_VALID = CaseDef {
        id: "manifest.valid",
        title: "The manifest validates",
        level: Must,
        spec: "plugin-host.md § Manifest validation",
        sentence: "Install time — full schema validation. Invalid manifests are rejected; the plugin is not installed.",
        per: Per::Plugin,
        kind: Kind::ManifestInvalid,
        lane: Lane::Own,
        start_gate: true,
        rules: &[],
    };

    /// `manifest.no_warnings` (SHOULD): the manifest validates without warnings.
    MANIFEST_NO_WARNINGS = CaseDef {
        id: "manifest.no_warnings",
        title: "The manifest validates without warnings",
        level: Should,
        spec: "plugin-host.md § Manifest validation",
        sentence: "The validator emits warnings for type-mismatches.",
        per: Per::Plugin,
        kind: Kind::ManifestInvalid,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `manifest.tool_count` (SHOULD): the plugin declares at most
    /// [`MAX_TOOLS`] tools.
    MANIFEST_TOOL_COUNT = CaseDef {
        id: "manifest.tool_count",
        title: "The plugin declares at most 64 tools",
        level: Should,
        spec: "kit (a host's tool-list budget; peer-hermit's per-plugin cap)",
        sentence: "A plugin could register 200 tools and blow the model's tool-list budget. Enforce a cap (suggest 64) at manifest registration.",
        per: Per::Plugin,
        kind: Kind::ManifestInvalid,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `manifest.current` (SHOULD): an SDK plugin's manifest on disk is what
    /// its binary generates (`--print-manifest`).
    MANIFEST_CURRENT = CaseDef {
        id: "manifest.current",
        title: "The manifest on disk is what the plugin binary generates (--print-manifest)",
        level: Should,
        spec: "ADDENDUM §14; docs/authoring.md § The manifest follows from the code",
        sentence: "The daemon reads kaged-plugin.yaml from the plugin directory: a manifest that drifted from the code declares methods, tools or hooks the binary no longer has, or hides ones it has.",
        per: Per::Plugin,
        kind: Kind::ManifestDrift,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `launch.command_exists` (MUST): `command[0]` exists and is executable.
    LAUNCH_COMMAND_EXISTS = CaseDef {
        id: "launch.command_exists",
        title: "command[0] exists and is executable",
        level: Must,
        spec: "plugin-host.md § Manifest schema; ADDENDUM §3",
        sentence: "command[0] is the executable. Relative paths are resolved from the plugin's install directory.",
        per: Per::Plugin,
        kind: Kind::LaunchFailed,
        lane: Lane::Own,
        start_gate: true,
        rules: &[],
    };

    /// `launch.starts` (MUST): the process starts and stays up for the handshake.
    LAUNCH_STARTS = CaseDef {
        id: "launch.starts",
        title: "The process starts and stays up for the handshake",
        level: Must,
        spec: "plugin-host.md § Plugin supervisor / Spawn",
        sentence: "If any step fails, the plugin is marked failed and an audit event is logged.",
        per: Per::Plugin,
        kind: Kind::LaunchFailed,
        lane: Lane::Own,
        start_gate: true,
        rules: &[],
    };

    /// `launch.self_contained` (MUST): the plugin directory is
    /// self-contained: `plugin install` accepts it and its installed copy (the
    /// directory less `.git/` and what `.kagedignore` names) starts.
    LAUNCH_SELF_CONTAINED = CaseDef {
        id: "launch.self_contained",
        title: "The plugin directory is self-contained: its installed copy starts",
        level: Must,
        spec: "ADDENDUM §14; plugin-host.md § Install flow (step 6)",
        sentence: "What plugin install copies must start: a relative command[0] resolves inside the plugin directory; an absolute one names a system interpreter or binary. What install copies is the plugin directory, less .git/; a .kagedignore file (gitignore syntax) may leave out more.",
        per: Per::Plugin,
        kind: Kind::LaunchFailed,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `cage.starts_caged` (MUST): the plugin completes the handshake in its
    /// cage, under its declared capabilities.
    CAGE_STARTS_CAGED = CaseDef {
        id: "cage.starts_caged",
        title: "The plugin completes the handshake caged, under its declared capabilities",
        level: Must,
        spec: "plugin-host.md § Capability → cage policy translation; ADDENDUM §13",
        sentence: "Plugins always run sandboxed. The daemon translates capabilities into a cage policy (bwrap argv) before spawning the plugin.",
        per: Per::Plugin,
        kind: Kind::CageDenied,
        lane: Lane::Own,
        start_gate: true,
        rules: &[],
    };

    /// `handshake.silent_before_initialize` (MUST): nothing is sent before
    /// initialize.
    HANDSHAKE_SILENT_BEFORE_INITIALIZE = CaseDef {
        id: "handshake.silent_before_initialize",
        title: "Nothing is sent before initialize",
        level: Must,
        spec: "plugin-host.md § Initialization handshake",
        sentence: "The plugin must not send any message before receiving initialize.",
        per: Per::Plugin,
        kind: Kind::StdoutNoise,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `handshake.answers_in_time` (MUST): initialize is answered within the
    /// timeout.
    HANDSHAKE_ANSWERS_IN_TIME = CaseDef {
        id: "handshake.answers_in_time",
        title: "initialize is answered within the timeout",
        level: Must,
        spec: "plugin-host.md § Handshake failure modes",
        sentence: "Plugin does not respond within 10s: Kill, audit plugin.initialize_timeout.",
        per: Per::Plugin,
        kind: Kind::HandshakeFailed,
        lane: Lane::Own,
        start_gate: true,
        rules: &[],
    };

    /// `handshake.well_formed` (MUST): the initialize answer is well-formed
    /// JSON-RPC.
    HANDSHAKE_WELL_FORMED = CaseDef {
        id: "handshake.well_formed",
        title: "The initialize answer is well-formed JSON-RPC",
        level: Must,
        spec: "plugin-host.md § Handshake failure modes",
        sentence: "Response is malformed JSON-RPC: Kill, audit plugin.protocol_violation.",
        per: Per::Plugin,
        kind: Kind::HandshakeFailed,
        lane: Lane::Own,
        start_gate: true,
        rules: &[],
    };

    /// `handshake.name_matches` (MUST): name matches the manifest.
    HANDSHAKE_NAME_MATCHES = CaseDef {
        id: "handshake.name_matches",
        title: "name matches the manifest",
        level: Must,
        spec: "plugin-host.md § initialize response",
        sentence: "Must match the manifest's name. Mismatch → daemon kills the plugin.",
        per: Per::Plugin,
        kind: Kind::IdentityMismatch,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `handshake.version_matches` (MUST): version matches the manifest.
    HANDSHAKE_VERSION_MATCHES = CaseDef {
        id: "handshake.version_matches",
        title: "version matches the manifest",
        level: Must,
        spec: "plugin-host.md § initialize response",
        sentence: "Must match the manifest's version. Mismatch → kill.",
        per: Per::Plugin,
        kind: Kind::IdentityMismatch,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `handshake.api_version_matches` (MUST): api_version equals the daemon's.
    HANDSHAKE_API_VERSION_MATCHES = CaseDef {
        id: "handshake.api_version_matches",
        title: "api_version equals the daemon's",
        level: Must,
        spec: "plugin-host.md § initialize response",
        sentence: "The API version the plugin implements. Must equal the daemon's api_version.",
        per: Per::Plugin,
        kind: Kind::ProtocolVersionMismatch,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `handshake.methods_within_manifest` (SHOULD): every answered method is
    /// declared in the manifest.
    HANDSHAKE_METHODS_WITHIN_MANIFEST = CaseDef {
        id: "handshake.methods_within_manifest",
        title: "Every answered method is declared in the manifest",
        level: Should,
        spec: "plugin-host.md § initialize response; ADDENDUM §1",
        sentence: "Must be a subset of the manifest's methods. Extra methods → daemon logs warning, ignores them.",
        per: Per::Plugin,
        kind: Kind::NotDeclared,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `handshake.methods_complete` (SHOULD): every declared method and tool is
    /// answered in initialize.
    HANDSHAKE_METHODS_COMPLETE = CaseDef {
        id: "handshake.methods_complete",
        title: "Every declared method and tool is answered in initialize",
        level: Should,
        spec: "plugin-host.md § initialize response; ADDENDUM §1",
        sentence: "Missing methods → daemon logs warning, marks them unavailable.",
        per: Per::Plugin,
        kind: Kind::ToolNotExposed,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `handshake.capabilities_within_manifest` (MUST): capabilities_used is within
    /// the manifest.
    HANDSHAKE_CAPABILITIES_WITHIN_MANIFEST = CaseDef {
        id: "handshake.capabilities_within_manifest",
        title: "capabilities_used is within the manifest",
        level: Must,
        spec: "plugin-host.md § initialize response",
        sentence: "Must be a subset of the manifest's capabilities. Extra → kill.",
        per: Per::Plugin,
        kind: Kind::CapabilityNotDeclared,
        lane: Lane::Own,
        start_gate: true,
        rules: &[],
    };

    /// `handshake.initialize_variants` (MUST): the handshake completes with
    /// projects loaded at start and with storage unavailable.
    HANDSHAKE_INITIALIZE_VARIANTS = CaseDef {
        id: "handshake.initialize_variants",
        title: "The handshake completes with projects loaded and with storage unavailable",
        level: Must,
        spec: "plugin-host.md § Initialization handshake",
        sentence: "storage_available boolean: Whether the daemon has storage ready for this plugin. projects list of strings: Project slugs that have activated this plugin. Empty if the plugin is local-scope with no active projects.",
        per: Per::Plugin,
        kind: Kind::HandshakeFailed,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `handshake.no_stdout_noise` (MUST): nothing but JSON-RPC on stdout.
    HANDSHAKE_NO_STDOUT_NOISE = CaseDef {
        id: "handshake.no_stdout_noise",
        title: "Nothing but JSON-RPC on stdout",
        level: Must,
        spec: "plugin-host.md § Framing",
        sentence: "Plugins must not write anything to stdout that is not a JSON-RPC message.",
        per: Per::Plugin,
        kind: Kind::StdoutNoise,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };
}
