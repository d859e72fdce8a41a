//! Top-level fields: known keys, required fields, identity (`name`,
//! `version`, `kaged_api`, `description`, `author`, `license`, `homepage`),
//! `command`, `env` and the timeouts.

use kaged_plugin_protocol::manifest::YamlNode;
use kaged_plugin_protocol::names;

use super::locate::{child, item, Ctx};
use super::rule::Rule;

/// Every top-level key of the Full schema.
pub const TOP_LEVEL_KEYS: [&str; 21] = [
    "name",
    "version",
    "kaged_api",
    "description",
    "author",
    "license",
    "homepage",
    "command",
    "env",
    "capabilities",
    "roles",
    "hooks",
    "tools",
    "methods",
    "notifications",
    "config_schema",
    "system_config_schema",
    "knobs",
    "shutdown_timeout_sec",
    "health_interval_sec",
    "hook_timeout_sec",
];

/// Required top-level fields.
pub const REQUIRED_KEYS: [&str; 6] = [
    "name",
    "version",
    "kaged_api",
    "description",
    "command",
    "capabilities",
];

/// Optional top-level fields for which an explicit `null` means "absent".
pub const NULLABLE_KEYS: [&str; 9] = [
    "author",
    "license",
    "homepage",
    "roles",
    "config_schema",
    "system_config_schema",
    "shutdown_timeout_sec",
    "health_interval_sec",
    "hook_timeout_sec",
];

/// The highest (and only) `kaged_api` this host speaks.
pub const HOST_API_VERSION: i64 = 1;
/// Maximum length of `description`, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 200;
/// Environment variables the daemon controls (an `env` entry cannot override them).
pub const RESERVED_ENV: [&str; 3] = ["KAGED_PLUGIN_NAME", "KAGED_PLUGIN_DIR", "KAGED_API_VERSION"];

/// The timeout fields: key, rule, inclusive range.
pub const TIMEOUTS: [(&str, Rule, i64, i64); 3] = [
    ("shutdown_timeout_sec", Rule::ShutdownTimeoutRange, 1, 30),
    ("health_interval_sec", Rule::HealthIntervalRange, 5, 300),
    ("hook_timeout_sec", Rule::HookTimeoutRange, 1, 60),
];

/// The value of a top-level field, treating an explicit `null` as absent
/// for the nullable optional fields.
pub(crate) fn field<'a>(root: &'a YamlNode, key: &str) -> Option<&'a YamlNode> {
    root.get(key)
        .filter(|v| !(v.is_null() && NULLABLE_KEYS.contains(&key)))
}

/// Check keys, identity, command, env and timeouts.
pub(crate) fn check(ctx: &mut Ctx, root: &YamlNode) {
    let entries = root.as_map().unwrap_or_default();
    for (k, _) in entries {
        let key = k.key_text();
        if !TOP_LEVEL_KEYS.contains(&key.as_str()) {
            ctx.at(
                Rule::UnknownKey,
                k,
                &key,
                format!("unknown top-level key `{key}`"),
            );
        }
    }
    for key in REQUIRED_KEYS {
        if root.get(key).is_none() {
            ctx.at(
                Rule::MissingField,
                root,
                key,
                format!("required field `{key}` is missing"),
            );
        }
    }
    check_name(ctx, root);
    check_version(ctx, root);
    check_api(ctx, root);
    check_description(ctx, root);
    for key in ["author", "license"] {
        if let Some(v) = field(root, key) {
            ctx.string(v, key);
        }
    }
    if let Some(v) = field(root, "homepage") {
        if let Some(url) = ctx.string(v, "homepage") {
            if !(url.starts_with("https://") || url.starts_with("http://")) || url.contains(' ') {
                ctx.at(
                    Rule::HomepageNotUrl,
                    v,
                    "homepage",
                    format!("homepage `{url}` is not an http(s) URL"),
                );
            }
        }
    }
    check_command(ctx, root);
    check_env(ctx, root);
    for (key, rule, min, max) in TIMEOUTS {
        let Some(v) = field(root, key) else { continue };
        let Some(n) = ctx.integer(v, key) else {
            continue;
        };
        if !(min..=max).contains(&n) {
            ctx.at(
                rule,
                v,
                key,
                format!("`{key}` is {n}; it must be between {min} and {max} seconds"),
            );
        }
    }
}

fn check_name(ctx: &mut Ctx, root: &YamlNode) {
    let Some(v) = root.get("name") else { return };
    let Some(name) = ctx.string(v, "name") else {
        return;
    };
    if !names::is_plugin_name(name) {
        let why = if name.len() > names::MAX_PLUGIN_NAME_LEN {
            format!("is longer than {} characters", names::MAX_PLUGIN_NAME_LEN)
        } else {
            "does not match ^[a-z][a-z0-9-]*$".to_owned()
        };
        ctx.at(
            Rule::NameFormat,
            v,
            "name",
            format!("plugin name `{name}` {why}"),
        );
    } else if names::BUILTIN_TOOL_NAMESPACES.contains(&name) {
        ctx.at(
            Rule::NameBuiltinNamespace,
            v,
            "name",
            format!("plugin name `{name}` is a built-in tool namespace; its tools will read like built-ins"),
        );
    }
}

fn check_version(ctx: &mut Ctx, root: &YamlNode) {
    let Some(v) = root.get("version") else { return };
    let Some(version) = v.as_str() else {
        ctx.at(
            Rule::VersionSemver,
            v,
            "version",
            format!(
                "`version` must be a semantic version string (quote it), found {}",
                v.value.type_name()
            ),
        );
        return;
    };
    if let Err(e) = semver::Version::parse(version) {
        ctx.at(
            Rule::VersionSemver,
            v,
            "version",
            format!("`{version}` is not a semantic version: {e}"),
        );
    }
}

fn check_api(ctx: &mut Ctx, root: &YamlNode) {
    let Some(v) = root.get("kaged_api") else {
        return;
    };
    let Some(api) = ctx.integer(v, "kaged_api") else {
        return;
    };
    if !(1..=HOST_API_VERSION).contains(&api) {
        ctx.at(
            Rule::KagedApiUnsupported,
            v,
            "kaged_api",
            format!("kaged_api {api} is not supported: this host speaks 1..={HOST_API_VERSION}"),
        );
    }
}

fn check_description(ctx: &mut Ctx, root: &YamlNode) {
    let Some(v) = root.get("description") else {
        return;
    };
    let Some(d) = ctx.string(v, "description") else {
        return;
    };
    // A folded/literal scalar ends with one line break: still one line.
    let text = d.strip_suffix('\n').unwrap_or(d);
    if text.trim().is_empty() {
        ctx.at(
            Rule::DescriptionEmpty,
            v,
            "description",
            "`description` is empty",
        );
        return;
    }
    if text.contains(['\n', '\r']) {
        ctx.at(
            Rule::DescriptionMultiline,
            v,
            "description",
            "`description` must be one line",
        );
    }
    let n = text.chars().count();
    if n > MAX_DESCRIPTION_CHARS {
        ctx.at(
            Rule::DescriptionTooLong,
            v,
            "description",
            format!("`description` has {n} characters; max {MAX_DESCRIPTION_CHARS}"),
        );
    }
}

fn check_command(ctx: &mut Ctx, root: &YamlNode) {
    let Some(v) = root.get("command") else { return };
    let Some(argv) = ctx.seq(v, "command") else {
        return;
    };
    if argv.is_empty() {
        ctx.at(
            Rule::CommandEmpty,
            v,
            "command",
            "`command` must name an executable",
        );
        return;
    }
    for (i, arg) in argv.iter().enumerate() {
        let p = item("command", i);
        if let Some(s) = ctx.string(arg, &p) {
            if i == 0 && s.trim().is_empty() {
                ctx.at(
                    Rule::CommandExecutableEmpty,
                    arg,
                    &p,
                    "`command[0]` (the executable) is empty",
                );
            }
            if i == 0 && command_leaves_plugin_dir(s) {
                ctx.at(
                    Rule::CommandOutsidePluginDir,
                    arg,
                    &p,
                    format!(
                        "`command[0]` `{s}` leaves the plugin directory: the installed copy \
                         cannot start it (pack the plugin so its executable is inside the \
                         directory, e.g. `cargo kaged pack`)"
                    ),
                );
            }
        }
    }
}

/// Whether a relative `command[0]` resolves outside the plugin directory
/// (ADDENDUM §14), judged on the text: `..` that climbs above the start.
/// Absolute paths name system binaries and bare names fall back to the
/// plugin `PATH`; neither leaves the directory.
///
/// ```
/// use kaged_host_core::validate::command_leaves_plugin_dir as leaves;
/// assert!(leaves("../../target/debug/echo"));
/// assert!(!leaves("./bin/echo"));
/// assert!(!leaves("/usr/bin/python3"));
/// ```
pub fn command_leaves_plugin_dir(program: &str) -> bool {
    let path = std::path::Path::new(program);
    if path.is_absolute() {
        return false;
    }
    let mut depth = 0i64;
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return true;
                }
            }
            std::path::Component::Normal(_) => depth += 1,
            _ => {}
        }
    }
    false
}

fn check_env(ctx: &mut Ctx, root: &YamlNode) {
    let Some(v) = root.get("env") else { return };
    let Some(entries) = ctx.map(v, "env") else {
        return;
    };
    for (k, val) in entries {
        let key = k.key_text();
        let p = child("env", &key);
        ctx.string(val, &p);
        if RESERVED_ENV.contains(&key.as_str()) {
            ctx.at(
                Rule::EnvReserved,
                k,
                &p,
                format!(
                    "`{key}` is set by the daemon ({}); the manifest cannot override it",
                    RESERVED_ENV.join(", ")
                ),
            );
        }
    }
}
