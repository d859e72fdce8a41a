//! Where a path capability lands on the host, for the checks made outside
//! the cage compiler: install refuses, and the daemon does not start, a
//! plugin whose grant covers the plugin store or an installed copy (the
//! store's path is known there, not in the compiler).
//!
//! The path is taken as the compiler takes it: `config:/P` under the
//! operator's config root (resolved), `project:/P` under the project root,
//! an absolute path as written (a `..` component is a manifest error);
//! normalised, then resolved (symlinks
//! followed, a missing rest appended). Both forms are given: a check of
//! overlap looks at each.
//!
//! ```
//! use kaged_host_core::cage::grant_path;
//! let g = grant_path("write:fs:config:/memory", Some("/srv/cfg".as_ref()), None).unwrap();
//! assert_eq!(g.declared, std::path::PathBuf::from("/srv/cfg/memory"));
//! assert!(grant_path("net:*", None, None).is_none());
//! ```

use std::path::{Path, PathBuf};

use kaged_plugin_protocol::capability::Capability;

use super::fs_view::HostFs;
use super::resolve::{normalize, resolve};

/// The host path of one path capability.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantPath {
    /// The capability, canonical.
    pub capability: String,
    /// Its path on the host, normalised.
    pub declared: PathBuf,
    /// [`declared`](Self::declared) with its symlinks followed (equal to
    /// it when none is on the way, or when it cannot be resolved).
    pub resolved: PathBuf,
    /// `write:fs:` or an `exec:` working directory (bound read-write).
    pub writable: bool,
}

impl GrantPath {
    /// Whether this grant reaches `protected` (a resolved host path): its
    /// path, declared or resolved, is `protected`, contains it, or lies
    /// inside it.
    pub fn overlaps(&self, protected: &Path) -> bool {
        [&self.declared, &self.resolved]
            .iter()
            .any(|p| p.starts_with(protected) || protected.starts_with(p))
    }

    /// Whether this grant contains `protected` (is it, or one of its
    /// ancestors), declared or resolved.
    pub fn contains(&self, protected: &Path) -> bool {
        [&self.declared, &self.resolved]
            .iter()
            .any(|p| protected.starts_with(p))
    }
}

/// The host path of `capability` when it is a path capability
/// (`read:fs:`, `write:fs:`, the working directory of `exec:`); `None`
/// for any other, and for a `config:/` or `project:/` path whose root is
/// not given (it lands nowhere known yet).
pub fn grant_path(
    capability: &str,
    config_root: Option<&Path>,
    project_root: Option<&Path>,
) -> Option<GrantPath> {
    let (raw, writable) = match Capability::parse(capability).ok()? {
        Capability::ReadFs(p) => (p, false),
        Capability::WriteFs(p) | Capability::Exec { path: p, .. } => (p, true),
        _ => return None,
    };
    let under =
        |root: &Path, rel: &str| normalize(&resolved_path(root).join(rel.trim_start_matches('/')));
    let declared = if let Some(rel) = raw.strip_prefix("config:/") {
        under(config_root?, rel)
    } else if let Some(rel) = raw.strip_prefix("project:/") {
        under(project_root?, rel)
    } else {
        normalize(Path::new(&raw))
    };
    Some(GrantPath {
        capability: capability.to_string(),
        resolved: resolved_path(&declared),
        declared,
        writable,
    })
}

/// `path` normalised with its symlinks followed (normalised only when it
/// cannot be resolved).
pub fn resolved_path(path: &Path) -> PathBuf {
    resolve(&HostFs, path).map_or_else(|_| normalize(path), |r| r.path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_and_symlinks_are_followed() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let real = resolved_path(tmp.path());
        std::fs::create_dir(real.join("store")).expect("mkdir");
        std::os::unix::fs::symlink(real.join("store"), real.join("link")).expect("symlink");
        let cap = format!("write:fs:{}/link/plugins", real.display());
        let g = grant_path(&cap, None, None).expect("a path capability");
        assert_eq!(g.declared, real.join("link/plugins"));
        assert_eq!(g.resolved, real.join("store/plugins"));
        assert!(g.overlaps(&real.join("store")) && !g.contains(&real.join("store")));
        assert!(g.contains(&real.join("store/plugins/echo")));

        let g = grant_path("read:fs:config:/", Some(&real.join("link")), None)
            .expect("a path capability");
        assert_eq!(
            g.declared,
            real.join("store"),
            "the config root is resolved"
        );
        assert!(g.contains(&real.join("store")));
    }

    #[test]
    fn other_capabilities_and_unknown_roots_name_no_path() {
        assert_eq!(grant_path("net:h:1", None, None), None);
        assert_eq!(grant_path("kaged:storage:write", None, None), None);
        assert_eq!(grant_path("write:fs:project:/x", None, None), None);
        let g = grant_path("exec:git:project:/x", None, Some("/p".as_ref())).expect("exec");
        assert_eq!(g.declared, PathBuf::from("/p/x"));
    }
}
