// Name rules of the kaged plugin protocol, written once.
//
// This file is plain `std` Rust with no imports so that the macros crate can
// `include!` it and check names at compile time with exactly the rules the
// SDK and the host use at run time.

/// Namespaces a custom method may not start with.
pub const RESERVED_METHOD_PREFIXES: [&str; 2] = ["kaged.", "system."];

/// Built-in tool namespaces (a plugin named like one of these gets a warning).
pub const BUILTIN_TOOL_NAMESPACES: [&str; 6] = ["file", "search", "code", "debug", "shell", "kaged"];

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
    if let Some(p) = RESERVED_METHOD_PREFIXES.iter().find(|p| name.starts_with(*p)) {
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

/// `[a-z][a-z0-9_]*`: a knob name.
pub fn is_knob_name(name: &str) -> bool {
    is_segment(name, b"_")
}
