//! The capability grammar (`plugin-host.md` § Capability grammar, ADDENDUM §3).

use kaged_plugin_sdk::manifest::YamlNode;

use super::locate::{item, Ctx};
use super::Rule;

/// URI prefixes a `read:fs:`/`write:fs:`/`exec:` path may start with
/// instead of `/` (ADDENDUM §3).
pub const PATH_URI_PREFIXES: [&str; 2] = ["config:/", "project:/"];

/// One capability, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Capability {
    /// `read:fs:<path>`.
    ReadFs(String),
    /// `write:fs:<path>`.
    WriteFs(String),
    /// `exec:<binary>:<path>`.
    Exec {
        /// The binary (a bare name or an absolute path).
        binary: String,
        /// The working directory it is restricted to.
        path: String,
    },
    /// `net:<host>:<port>` or `net:<host>:*` (`port: None`).
    Net {
        /// Host name, IPv4 address or bracketed IPv6 address.
        host: String,
        /// The port, or `None` for every port.
        port: Option<u16>,
    },
    /// `net:*`: unrestricted network.
    NetAll,
    /// `net:[]` (also `"net:[]"` and the mapping `net: []`): no network.
    NetNone,
    /// `kaged:storage:read`.
    StorageRead,
    /// `kaged:storage:write` (implies read).
    StorageWrite,
}

/// Why a capability string is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CapabilityError {
    /// The rule broken.
    pub rule: Rule,
    /// What is wrong.
    pub message: String,
}

fn fail<T>(rule: Rule, message: String) -> Result<T, CapabilityError> {
    Err(CapabilityError { rule, message })
}

/// Parse one capability string.
pub fn parse_capability(cap: &str) -> Result<Capability, CapabilityError> {
    match cap {
        "net:[]" => return Ok(Capability::NetNone),
        "net:*" => return Ok(Capability::NetAll),
        "kaged:storage:read" => return Ok(Capability::StorageRead),
        "kaged:storage:write" => return Ok(Capability::StorageWrite),
        _ => {}
    }
    if let Some(path) = cap.strip_prefix("read:fs:") {
        return check_path(cap, path).map(|()| Capability::ReadFs(path.to_owned()));
    }
    if let Some(path) = cap.strip_prefix("write:fs:") {
        return check_path(cap, path).map(|()| Capability::WriteFs(path.to_owned()));
    }
    if let Some(rest) = cap.strip_prefix("exec:") {
        let Some((binary, path)) = rest.split_once(':') else {
            return fail(
                Rule::CapabilityUnknown,
                format!("`{cap}` must be exec:<binary>:<path>"),
            );
        };
        check_binary(cap, binary)?;
        check_path(cap, path)?;
        return Ok(Capability::Exec {
            binary: binary.to_owned(),
            path: path.to_owned(),
        });
    }
    if let Some(rest) = cap.strip_prefix("net:") {
        let Some((host, port)) = rest.rsplit_once(':') else {
            return fail(
                Rule::CapabilityUnknown,
                format!("`{cap}` must be net:<host>:<port>, net:<host>:*, net:* or net:[]"),
            );
        };
        if !is_host(host) {
            return fail(
                Rule::CapabilityNetHost,
                format!("`{cap}`: `{host}` is not a host name or IP address"),
            );
        }
        let port = if port == "*" {
            None
        } else {
            match port.parse::<u16>() {
                Ok(p) if p >= 1 && port.bytes().all(|b| b.is_ascii_digit()) => Some(p),
                _ => {
                    return fail(
                        Rule::CapabilityNetPort,
                        format!("`{cap}`: port `{port}` must be `*` or 1..=65535"),
                    )
                }
            }
        };
        return Ok(Capability::Net {
            host: host.to_owned(),
            port,
        });
    }
    fail(
        Rule::CapabilityUnknown,
        format!("unknown capability `{cap}`"),
    )
}

fn check_path(cap: &str, path: &str) -> Result<(), CapabilityError> {
    let rooted = path.starts_with('/') || PATH_URI_PREFIXES.iter().any(|p| path.starts_with(p));
    if !rooted {
        return fail(
            Rule::CapabilityPath,
            format!("`{cap}`: path `{path}` must be absolute or start with config:/ or project:/"),
        );
    }
    if path.contains(['*', '?', '[', ']', '{', '}']) {
        return fail(
            Rule::CapabilityPath,
            format!("`{cap}`: glob patterns are not supported in capabilities"),
        );
    }
    Ok(())
}

fn check_binary(cap: &str, binary: &str) -> Result<(), CapabilityError> {
    let bare = !binary.is_empty()
        && binary
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b));
    let absolute = binary.starts_with('/') && !binary.contains(char::is_whitespace);
    if bare || absolute {
        Ok(())
    } else {
        fail(
            Rule::CapabilityExecBinary,
            format!("`{cap}`: binary `{binary}` must be a bare name or an absolute path"),
        )
    }
}

fn is_host(host: &str) -> bool {
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inner.contains(':') && inner.parse::<std::net::Ipv6Addr>().is_ok();
    }
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// A capability entry: the string form, or the mapping form `net: []`.
fn entry_text(ctx: &mut Ctx, node: &YamlNode, path: &str) -> Option<String> {
    if let Some(s) = node.as_str() {
        return Some(s.to_owned());
    }
    if let Some(map) = node.as_map() {
        let is_no_net = map.len() == 1
            && map[0].0.as_str() == Some("net")
            && map[0].1.as_seq().is_some_and(<[YamlNode]>::is_empty);
        if is_no_net {
            return Some("net:[]".to_owned());
        }
        ctx.at(
            Rule::CapabilityUnknown,
            node,
            path,
            "the only mapping capability is `net: []`; write other capabilities as strings (`net:host:443`)",
        );
        return None;
    }
    ctx.wrong_type(node, path, "a capability string");
    None
}

/// Check `capabilities`.
pub(crate) fn check(ctx: &mut Ctx, root: &YamlNode) {
    let Some(v) = root.get("capabilities") else {
        return;
    };
    let Some(entries) = ctx.seq(v, "capabilities") else {
        return;
    };
    let mut seen: Vec<(String, Capability)> = Vec::new();
    let mut no_net: Option<(&YamlNode, String)> = None;
    let mut grants_net = false;
    for (i, node) in entries.iter().enumerate() {
        let p = item("capabilities", i);
        let Some(text) = entry_text(ctx, node, &p) else {
            continue;
        };
        match parse_capability(&text) {
            Err(e) => ctx.at(e.rule, node, &p, e.message),
            Ok(cap) => {
                if seen.iter().any(|(t, _)| *t == text) {
                    ctx.at(
                        Rule::CapabilityDuplicate,
                        node,
                        &p,
                        format!("capability `{text}` is listed twice"),
                    );
                }
                match cap {
                    Capability::NetNone => no_net = no_net.or(Some((node, p))),
                    Capability::Net { .. } | Capability::NetAll => grants_net = true,
                    _ => {}
                }
                seen.push((text, cap));
            }
        }
    }
    if let (Some((node, p)), true) = (no_net, grants_net) {
        ctx.at(
            Rule::CapabilityNetConflict,
            node,
            &p,
            "`net:[]` (no network) is listed together with a network grant",
        );
    }
}
