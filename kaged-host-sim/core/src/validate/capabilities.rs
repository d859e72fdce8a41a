//! The capability grammar (`plugin-host.md` § Capability grammar, ADDENDUM §3),
//! checked: the protocol crate parses ([`Capability::parse`]); this module
//! names the broken rule, locates it, and checks the list (duplicates,
//! `net:[]` with a network grant).

use kaged_plugin_protocol::capability::{CapabilityErrorKind, PathGrant, NET_NONE};
use kaged_plugin_protocol::manifest::YamlNode;

use super::locate::{item, Ctx};
use super::rule::Rule;

pub use kaged_plugin_protocol::capability::{Capability, PATH_URI_PREFIXES};

/// Why a capability string is invalid: the protocol's
/// [`kaged_plugin_protocol::capability::CapabilityError`] under the
/// validator's rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CapabilityError {
    /// The rule broken.
    pub rule: Rule,
    /// What is wrong.
    pub message: String,
}

/// Parse one capability string ([`Capability::parse`]), naming the broken
/// rule on failure.
pub fn parse_capability(cap: &str) -> Result<Capability, CapabilityError> {
    Capability::parse(cap).map_err(|e| CapabilityError {
        rule: rule_of(e.kind),
        message: e.message,
    })
}

/// The validator rule a part of the capability grammar is checked under.
fn rule_of(kind: CapabilityErrorKind) -> Rule {
    match kind {
        CapabilityErrorKind::Unknown => Rule::CapabilityUnknown,
        CapabilityErrorKind::Path => Rule::CapabilityPath,
        CapabilityErrorKind::ExecBinary => Rule::CapabilityExecBinary,
        CapabilityErrorKind::NetHost => Rule::CapabilityNetHost,
        CapabilityErrorKind::NetPort => Rule::CapabilityNetPort,
    }
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
            return Some(NET_NONE.to_owned());
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
    let mut seen: Vec<(usize, String, Capability)> = Vec::new();
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
                if seen.iter().any(|(_, t, _)| *t == text) {
                    ctx.at(
                        Rule::CapabilityDuplicate,
                        node,
                        &p,
                        format!("capability `{text}` is listed twice"),
                    );
                }
                if cap == Capability::NetNone {
                    no_net = no_net.or(Some((node, p)));
                }
                grants_net |= cap.grants_network();
                seen.push((i, text, cap));
            }
        }
    }
    for (text, node, p) in nested_grants(&seen, entries) {
        ctx.at(Rule::CapabilityNestedGrant, node, &p, text);
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

/// Each grant strictly inside a writable grant of the same root, with the
/// message naming both (ADDENDUM §16).
fn nested_grants<'a>(
    seen: &[(usize, String, Capability)],
    entries: &'a [YamlNode],
) -> Vec<(String, &'a YamlNode, String)> {
    let paths: Vec<(usize, &str, PathGrant)> = seen
        .iter()
        .filter_map(|(i, t, c)| Some((*i, t.as_str(), c.path_grant()?)))
        .collect();
    let mut out = Vec::new();
    for (i, text, inner) in &paths {
        let outer = paths
            .iter()
            .find(|(_, _, o)| o.writable && inner.lies_inside(o) && inner.parts != o.parts);
        if let (Some((_, outer, _)), Some(node)) = (outer, entries.get(*i)) {
            out.push((
                format!(
                    "`{text}` lies inside the writable grant `{outer}`: a grant nested in a \
                     writable grant is refused (the cage would build it through a directory \
                     the plugin, or another, can swap); declare one of them only"
                ),
                node,
                item("capabilities", *i),
            ));
        }
    }
    out
}
