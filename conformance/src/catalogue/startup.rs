//! Cases of the start: the manifest validates, the command starts (in its
//! cage), and the `initialize` handshake is what the spec asks.

use super::case::CaseDef;
use super::case::Level::{Must, Should};

/// `manifest.valid` (MUST): the manifest validates.
pub const MANIFEST_VALID: CaseDef = CaseDef {
    id: "manifest.valid",
    title: "The manifest validates",
    level: Must,
    spec: "plugin-host.md § Manifest validation",
    sentence: "Install time — full schema validation. Invalid manifests are rejected; the plugin is not installed.",
    per: None,
};

/// `manifest.no_warnings` (SHOULD): the manifest validates without warnings.
pub const MANIFEST_NO_WARNINGS: CaseDef = CaseDef {
    id: "manifest.no_warnings",
    title: "The manifest validates without warnings",
    level: Should,
    spec: "plugin-host.md § Manifest validation",
    sentence: "The validator emits warnings for type-mismatches.",
    per: None,
};

/// `manifest.current` (SHOULD): an SDK plugin's manifest on disk is what
/// its binary generates (`--print-manifest`).
pub const MANIFEST_CURRENT: CaseDef = CaseDef {
    id: "manifest.current",
    title: "The manifest on disk is what the plugin binary generates (--print-manifest)",
    level: Should,
    spec: "ADDENDUM §14; docs/authoring.md § The manifest follows from the code",
    sentence: "The daemon reads kaged-plugin.yaml from the plugin directory: a manifest that drifted from the code declares methods, tools or hooks the binary no longer has, or hides ones it has.",
    per: None,
};

/// `launch.command_exists` (MUST): `command[0]` exists and is executable.
pub const LAUNCH_COMMAND_EXISTS: CaseDef = CaseDef {
    id: "launch.command_exists",
    title: "command[0] exists and is executable",
    level: Must,
    spec: "plugin-host.md § Manifest schema; ADDENDUM §3",
    sentence: "command[0] is the executable. Relative paths are resolved from the plugin's install directory.",
    per: None,
};

/// `launch.starts` (MUST): the process starts and stays up for the handshake.
pub const LAUNCH_STARTS: CaseDef = CaseDef {
    id: "launch.starts",
    title: "The process starts and stays up for the handshake",
    level: Must,
    spec: "plugin-host.md § Plugin supervisor / Spawn",
    sentence: "If any step fails, the plugin is marked failed and an audit event is logged.",
    per: None,
};

/// `launch.self_contained` (MUST): the plugin directory is
/// self-contained: `plugin install` accepts it and its installed copy (the
/// directory less `.git/` and what `.kagedignore` names) starts.
pub const LAUNCH_SELF_CONTAINED: CaseDef = CaseDef {
    id: "launch.self_contained",
    title: "The plugin directory is self-contained: its installed copy starts",
    level: Must,
    spec: "ADDENDUM §14; plugin-host.md § Install flow (step 6)",
    sentence: "What plugin install copies must start: a relative command[0] resolves inside the plugin directory; an absolute one names a system interpreter or binary. What install copies is the plugin directory, less .git/; a .kagedignore file (gitignore syntax) may leave out more.",
    per: None,
};

/// `cage.starts_caged` (MUST): the plugin completes the handshake in its
/// cage, under its declared capabilities.
pub const CAGE_STARTS_CAGED: CaseDef = CaseDef {
    id: "cage.starts_caged",
    title: "The plugin completes the handshake caged, under its declared capabilities",
    level: Must,
    spec: "plugin-host.md § Capability → cage policy translation; ADDENDUM §13",
    sentence: "Plugins always run sandboxed. The daemon translates capabilities into a cage policy (bwrap argv) before spawning the plugin.",
    per: None,
};

/// `handshake.silent_before_initialize` (MUST): nothing is sent before
/// initialize.
pub const HANDSHAKE_SILENT_BEFORE_INITIALIZE: CaseDef = CaseDef {
    id: "handshake.silent_before_initialize",
    title: "Nothing is sent before initialize",
    level: Must,
    spec: "plugin-host.md § Initialization handshake",
    sentence: "The plugin must not send any message before receiving initialize.",
    per: None,
};

/// `handshake.answers_in_time` (MUST): initialize is answered within the
/// timeout.
pub const HANDSHAKE_ANSWERS_IN_TIME: CaseDef = CaseDef {
    id: "handshake.answers_in_time",
    title: "initialize is answered within the timeout",
    level: Must,
    spec: "plugin-host.md § Handshake failure modes",
    sentence: "Plugin does not respond within 10s: Kill, audit plugin.initialize_timeout.",
    per: None,
};

/// `handshake.well_formed` (MUST): the initialize answer is well-formed
/// JSON-RPC.
pub const HANDSHAKE_WELL_FORMED: CaseDef = CaseDef {
    id: "handshake.well_formed",
    title: "The initialize answer is well-formed JSON-RPC",
    level: Must,
    spec: "plugin-host.md § Handshake failure modes",
    sentence: "Response is malformed JSON-RPC: Kill, audit plugin.protocol_violation.",
    per: None,
};

/// `handshake.name_matches` (MUST): name matches the manifest.
pub const HANDSHAKE_NAME_MATCHES: CaseDef = CaseDef {
    id: "handshake.name_matches",
    title: "name matches the manifest",
    level: Must,
    spec: "plugin-host.md § initialize response",
    sentence: "Must match the manifest's name. Mismatch → daemon kills the plugin.",
    per: None,
};

/// `handshake.version_matches` (MUST): version matches the manifest.
pub const HANDSHAKE_VERSION_MATCHES: CaseDef = CaseDef {
    id: "handshake.version_matches",
    title: "version matches the manifest",
    level: Must,
    spec: "plugin-host.md § initialize response",
    sentence: "Must match the manifest's version. Mismatch → kill.",
    per: None,
};

/// `handshake.api_version_matches` (MUST): api_version equals the daemon's.
pub const HANDSHAKE_API_VERSION_MATCHES: CaseDef = CaseDef {
    id: "handshake.api_version_matches",
    title: "api_version equals the daemon's",
    level: Must,
    spec: "plugin-host.md § initialize response",
    sentence: "The API version the plugin implements. Must equal the daemon's api_version.",
    per: None,
};

/// `handshake.methods_within_manifest` (SHOULD): every answered method is
/// declared in the manifest.
pub const HANDSHAKE_METHODS_WITHIN_MANIFEST: CaseDef = CaseDef {
    id: "handshake.methods_within_manifest",
    title: "Every answered method is declared in the manifest",
    level: Should,
    spec: "plugin-host.md § initialize response; ADDENDUM §1",
    sentence: "Must be a subset of the manifest's methods. Extra methods → daemon logs warning, ignores them.",
    per: None,
};

/// `handshake.methods_complete` (SHOULD): every declared method and tool is
/// answered in initialize.
pub const HANDSHAKE_METHODS_COMPLETE: CaseDef = CaseDef {
    id: "handshake.methods_complete",
    title: "Every declared method and tool is answered in initialize",
    level: Should,
    spec: "plugin-host.md § initialize response; ADDENDUM §1",
    sentence: "Missing methods → daemon logs warning, marks them unavailable.",
    per: None,
};

/// `handshake.capabilities_within_manifest` (MUST): capabilities_used is within
/// the manifest.
pub const HANDSHAKE_CAPABILITIES_WITHIN_MANIFEST: CaseDef = CaseDef {
    id: "handshake.capabilities_within_manifest",
    title: "capabilities_used is within the manifest",
    level: Must,
    spec: "plugin-host.md § initialize response",
    sentence: "Must be a subset of the manifest's capabilities. Extra → kill.",
    per: None,
};

/// `handshake.initialize_variants` (MUST): the handshake completes with
/// projects loaded at start and with storage unavailable.
pub const HANDSHAKE_INITIALIZE_VARIANTS: CaseDef = CaseDef {
    id: "handshake.initialize_variants",
    title: "The handshake completes with projects loaded and with storage unavailable",
    level: Must,
    spec: "plugin-host.md § Initialization handshake",
    sentence: "storage_available boolean: Whether the daemon has storage ready for this plugin. projects list of strings: Project slugs that have activated this plugin. Empty if the plugin is local-scope with no active projects.",
    per: None,
};

/// `handshake.no_stdout_noise` (MUST): nothing but JSON-RPC on stdout.
pub const HANDSHAKE_NO_STDOUT_NOISE: CaseDef = CaseDef {
    id: "handshake.no_stdout_noise",
    title: "Nothing but JSON-RPC on stdout",
    level: Must,
    spec: "plugin-host.md § Framing",
    sentence: "Plugins must not write anything to stdout that is not a JSON-RPC message.",
    per: None,
};
