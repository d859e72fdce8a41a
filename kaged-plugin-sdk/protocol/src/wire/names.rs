//! Name rules of the kaged plugin protocol, written once: the macros crate
//! checks names at compile time, and the SDK and the host at run time, with
//! exactly these functions.

/// Namespaces a custom method may not start with.
pub const RESERVED_METHOD_PREFIXES: [&str; 2] = ["kaged.", "system."];

/// Built-in tool namespaces (a plugin named like one of these gets a warning).
pub const BUILTIN_TOOL_NAMESPACES: [&str; 6] =
    ["file", "search", "code", "debug", "shell", "kaged"];

/// Maximum length of a plugin name.
pub const MAX_PLUGIN_NAME_LEN: usize = 64;

fn is_segment(seg: &str, extra: &[u8]) -> bool {
    let b = seg.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || extra.contains(c))
}

/// `^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*){1,3}$`: a custom method or
/// notification name of 2 to 4 segments. Reserved namespaces are checked
/// separately by [`method_name_problem`].
pub fn is_method_name(name: &str) -> bool {
    let segs: Vec<&str> = name.split('.').collect();
    (2..=4).contains(&segs.len()) && segs.iter().all(|s| is_segment(s, b"_"))
}

/// Why `name` is not a valid custom method name, or `None` when it is.
pub fn method_name_problem(name: &str) -> Option<String> {
    if let Some(p) = RESERVED_METHOD_PREFIXES
        .iter()
        .find(|p| name.starts_with(*p))
    {
        return Some(format!(
            "method name `{name}` uses the reserved namespace `{p}`"
        ));
    }
    if !is_method_name(name) {
        return Some(format!(
            "method name `{name}` does not match ^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*){{1,3}}$ (lowercase, 2 to 4 dot-separated segments)"
        ));
    }
    None
}

/// `^[a-z][a-z0-9_]*$`: a tool name as declared (single segment).
pub fn is_tool_name(name: &str) -> bool {
    is_segment(name, b"_")
}

/// `^[a-z][a-z0-9-]*$`, at most 64 characters: a plugin name.
pub fn is_plugin_name(name: &str) -> bool {
    name.len() <= MAX_PLUGIN_NAME_LEN && is_segment(name, b"-")
}

/// `^[a-z][a-z0-9-]+\.[a-z][a-z0-9_]*$`: a registered (prefixed) tool name.
pub fn is_registered_tool_name(name: &str) -> bool {
    match name.split_once('.') {
        Some((plugin, tool)) => plugin.len() >= 2 && is_segment(plugin, b"-") && is_tool_name(tool),
        None => false,
    }
}

/// `<plugin>.<tool>`: the name a tool is registered and called under.
pub fn prefixed_tool_name(plugin: &str, tool: &str) -> String {
    format!("{plugin}.{tool}")
}

/// The storage table prefix of a plugin, as plugin-host.md § Storage
/// writes it: `plugin_<name with - as _>_`. The host prefixes every table
/// a plugin names with it; the plugin never sees it.
///
/// It is not injective: `foo`'s table `bar_x` and `foo-bar`'s table `x`
/// are both `plugin_foo_bar_x`. The host's owner registry decides whose
/// such a name is (the first to create it), and refuses it to the other.
///
/// ```
/// use kaged_plugin_protocol::names::storage_prefix;
/// assert_eq!(storage_prefix("oh-my-pi"), "plugin_oh_my_pi_");
/// assert_eq!(storage_prefix("echo"), "plugin_echo_");
/// ```
pub fn storage_prefix(plugin: &str) -> String {
    format!("plugin_{}_", plugin.replace('-', "_"))
}

/// `[a-z][a-z0-9_]*`: a knob name.
pub fn is_knob_name(name: &str) -> bool {
    is_segment(name, b"_")
}

/// The closed set of lifecycle hook names (manifest `hooks:` values).
pub const HOOK_NAMES: [&str; 4] = [
    "on_session_start",
    "on_session_idle",
    "pre_compact",
    "post_compact",
];

/// The closed set of plugin roles (manifest `roles:` values).
pub const ROLE_NAMES: [&str; 2] = ["observer", "compactor"];

/// Whether `name` is one of [`HOOK_NAMES`].
pub fn is_hook_name(name: &str) -> bool {
    HOOK_NAMES.contains(&name)
}

/// Whether `name` is one of [`ROLE_NAMES`].
pub fn is_role_name(name: &str) -> bool {
    ROLE_NAMES.contains(&name)
}

/// Why `name` is not a valid tool name, or `None` when it is.
pub fn tool_name_problem(name: &str) -> Option<String> {
    if is_tool_name(name) {
        None
    } else {
        Some(format!(
            "tool name `{name}` must be a single lowercase segment matching ^[a-z][a-z0-9_]*$"
        ))
    }
}

/// Why `name` is not a valid plugin name, or `None` when it is.
pub fn plugin_name_problem(name: &str) -> Option<String> {
    if is_plugin_name(name) {
        None
    } else {
        Some(format!(
            "plugin name `{name}` must match ^[a-z][a-z0-9-]*$ and be at most {MAX_PLUGIN_NAME_LEN} characters"
        ))
    }
}
