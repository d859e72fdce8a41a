//! Capabilities, typed: the grammar of `plugin-host.md` § Capability grammar
//! (and ADDENDUM §3) parsed into [`Capability`], which displays as its
//! canonical string.
//!
//! The manifest keeps its `capabilities:` entries as written
//! ([`crate::manifest::CapabilityEntry`], so that the validator can locate
//! every problem); [`crate::manifest::CapabilityEntry::capability`] turns
//! one into a [`Capability`]. The host's validator reports a
//! [`CapabilityError`] under the rule its [`CapabilityErrorKind`] names.
//!
//! ```
//! use kaged_plugin_protocol::capability::{self, Capability};
//! let cap: Capability = "net:api.example.com:443".parse().unwrap();
//! assert_eq!(cap, Capability::Net { host: "api.example.com".into(), port: Some(443) });
//! assert_eq!(cap.to_string(), "net:api.example.com:443");
//! assert_eq!(Capability::StorageWrite.to_string(), capability::STORAGE_WRITE);
//! ```

use std::fmt;
use std::str::FromStr;

/// `kaged:storage:read`: the plugin may query its storage.
pub const STORAGE_READ: &str = "kaged:storage:read";
/// `kaged:storage:write`: the plugin may write its storage (implies read).
pub const STORAGE_WRITE: &str = "kaged:storage:write";
/// `net:*`: unrestricted network.
pub const NET_ALL: &str = "net:*";
/// `net:[]`: no network (also written as the mapping `net: []`).
pub const NET_NONE: &str = "net:[]";

/// URI prefixes a `read:fs:`/`write:fs:`/`exec:` path may start with
/// instead of `/` (ADDENDUM §3).
pub const PATH_URI_PREFIXES: [&str; 2] = ["config:/", "project:/"];

/// One capability, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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

/// Which part of the grammar a capability string breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CapabilityErrorKind {
    /// Not a capability of the grammar at all (or a malformed one).
    Unknown,
    /// A `read:fs:`/`write:fs:`/`exec:` path that is not rooted, or a glob.
    Path,
    /// An `exec:` binary that is neither a bare name nor an absolute path.
    ExecBinary,
    /// A `net:` host that is not a host name or IP address.
    NetHost,
    /// A `net:` port that is not `*` or 1..=65535.
    NetPort,
}

/// Why a capability string is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CapabilityError {
    /// The part of the grammar broken.
    pub kind: CapabilityErrorKind,
    /// What is wrong, naming the capability.
    pub message: String,
}

fn fail<T>(kind: CapabilityErrorKind, message: String) -> Result<T, CapabilityError> {
    Err(CapabilityError { kind, message })
}

impl Capability {
    /// Parse one capability string (its canonical form; the mapping form
    /// `net: []` is [`crate::manifest::CapabilityEntry::canonical`]'d first).
    pub fn parse(cap: &str) -> Result<Capability, CapabilityError> {
        use CapabilityErrorKind as K;
        match cap {
            NET_NONE => return Ok(Capability::NetNone),
            NET_ALL => return Ok(Capability::NetAll),
            STORAGE_READ => return Ok(Capability::StorageRead),
            STORAGE_WRITE => return Ok(Capability::StorageWrite),
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
                return fail(K::Unknown, format!("`{cap}` must be exec:<binary>:<path>"));
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
                    K::Unknown,
                    format!("`{cap}` must be net:<host>:<port>, net:<host>:*, net:* or net:[]"),
                );
            };
            if !is_host(host) {
                return fail(
                    K::NetHost,
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
                            K::NetPort,
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
        fail(K::Unknown, format!("unknown capability `{cap}`"))
    }

    /// Whether it grants some network access (`net:*`, `net:<host>:<port>`).
    pub fn grants_network(&self) -> bool {
        matches!(self, Capability::NetAll | Capability::Net { .. })
    }

    /// The path of a `read:fs:`, `write:fs:` or `exec:` capability as
    /// written (no root resolved, no filesystem looked at); `None` for the
    /// others.
    ///
    /// ```
    /// use kaged_plugin_protocol::capability::Capability;
    /// let inner = Capability::parse("read:fs:config:/shared/./x/data").unwrap();
    /// let outer = Capability::parse("write:fs:config:/shared").unwrap();
    /// let (inner, outer) = (inner.path_grant().unwrap(), outer.path_grant().unwrap());
    /// assert!(outer.writable && inner.lies_inside(&outer));
    /// assert!(!outer.lies_inside(&inner));
    /// assert!(Capability::parse("net:*").unwrap().path_grant().is_none());
    /// ```
    pub fn path_grant(&self) -> Option<PathGrant> {
        let (raw, writable) = match self {
            Capability::ReadFs(p) => (p, false),
            Capability::WriteFs(p) | Capability::Exec { path: p, .. } => (p, true),
            _ => return None,
        };
        let (root, rest) = PATH_URI_PREFIXES
            .into_iter()
            .find_map(|r| raw.strip_prefix(r).map(|rest| (r, rest)))
            .unwrap_or(("/", raw.as_str()));
        let mut parts: Vec<String> = Vec::new();
        for part in rest.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                p => parts.push(p.to_owned()),
            }
        }
        Some(PathGrant {
            root,
            parts,
            writable,
        })
    }
}

/// The path of a path capability, lexically: its root and its components.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PathGrant {
    /// `config:/`, `project:/`, or `/` for an absolute path.
    pub root: &'static str,
    /// The normal components after the root (`.` dropped, `..` removing
    /// the one before it).
    pub parts: Vec<String>,
    /// `write:fs:`, or the working directory of `exec:` (bound read-write).
    pub writable: bool,
}

impl PathGrant {
    /// Whether this path is `other` or lies beneath it (the same root,
    /// `other`'s components a prefix of this one's).
    pub fn lies_inside(&self, other: &PathGrant) -> bool {
        self.root == other.root && self.parts.starts_with(&other.parts)
    }
}

impl FromStr for Capability {
    type Err = CapabilityError;

    fn from_str(s: &str) -> Result<Capability, CapabilityError> {
        Capability::parse(s)
    }
}

/// The canonical string: what [`Capability::parse`] reads back.
impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Capability::ReadFs(path) => write!(f, "read:fs:{path}"),
            Capability::WriteFs(path) => write!(f, "write:fs:{path}"),
            Capability::Exec { binary, path } => write!(f, "exec:{binary}:{path}"),
            Capability::Net {
                host,
                port: Some(port),
            } => write!(f, "net:{host}:{port}"),
            Capability::Net { host, port: None } => write!(f, "net:{host}:*"),
            Capability::NetAll => f.write_str(NET_ALL),
            Capability::NetNone => f.write_str(NET_NONE),
            Capability::StorageRead => f.write_str(STORAGE_READ),
            Capability::StorageWrite => f.write_str(STORAGE_WRITE),
        }
    }
}

impl From<Capability> for String {
    /// The canonical string, so that APIs taking `impl Into<String>` (the
    /// SDK's `capability_used`) take a [`Capability`] too.
    fn from(cap: Capability) -> String {
        cap.to_string()
    }
}

fn check_path(cap: &str, path: &str) -> Result<(), CapabilityError> {
    let rooted = path.starts_with('/') || PATH_URI_PREFIXES.iter().any(|p| path.starts_with(p));
    if !rooted {
        return fail(
            CapabilityErrorKind::Path,
            format!("`{cap}`: path `{path}` must be absolute or start with config:/ or project:/"),
        );
    }
    if path.contains(['*', '?', '[', ']', '{', '}']) {
        return fail(
            CapabilityErrorKind::Path,
            format!("`{cap}`: glob patterns are not supported in capabilities"),
        );
    }
    // ADDENDUM §15: a `..` component is a manifest error (it would leave the
    // root the path is declared under, or read as another path than the
    // one the operator consented to).
    if path.split('/').any(|c| c == "..") {
        return fail(
            CapabilityErrorKind::Path,
            format!("`{cap}`: path `{path}` has a `..` component; write the path it means"),
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
            CapabilityErrorKind::ExecBinary,
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
