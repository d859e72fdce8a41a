//! An installed copy is read-only to its own cage whatever the grants: a
//! path capability that reaches the plugin store is refused at install and
//! at every start (a plugin able to write its installed copy could rewrite
//! its own manifest and be restarted with what it wrote).
//!
//! **The rule.** A grant (`read:fs:`, `write:fs:`, `exec:`'s working
//! directory; read too, since the store holds the daemon's API token and
//! the consent record) is refused when its host path, as the cage takes it
//! ([`kaged_host_core::cage::grant_path`]: `config:/` under the config
//! root, symlinks followed), is the store root or one of its ancestors, or
//! reaches one of the entries the store owns ([`STORE_OWNED`]: the
//! installed copies under `plugins/`, the consent record `config.toml`,
//! the daemon's `daemon.json`). A grant to another path inside the store
//! root (`<store>/notes`) is left alone: a config root kept inside the
//! store still works.

use std::path::{Path, PathBuf};

use kaged_host_core::cage::{grant_path, resolved_path};

/// The entries at the store root that the store owns: the installed copies
/// (`plugins/`), the consent record and its temporary twin, and the file a
/// running daemon leaves there (`daemon.json`: its API address and token).
pub const STORE_OWNED: [&str; 4] = ["plugins", "config.toml", "config.toml.tmp", "daemon.json"];

/// A grant that reaches the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreGrant {
    /// The capability, canonical.
    pub capability: String,
    /// Its host path (resolved).
    pub path: PathBuf,
    /// What of the store it reaches: the store root or an owned entry it
    /// holds, else its own path inside an owned entry (an installed copy).
    pub covers: PathBuf,
}

/// The capabilities of `capabilities` that reach the store at `store_root`
/// (see the module docs), `config:/` and `project:/` paths resolving under
/// the roots given (a `project:/` path with no project root is not
/// checked: it lands nowhere known yet).
pub fn grants_over_store(
    capabilities: &[String],
    store_root: &Path,
    config_root: Option<&Path>,
    project_root: Option<&Path>,
) -> Vec<StoreGrant> {
    let store = resolved_path(store_root);
    capabilities
        .iter()
        .filter_map(|c| grant_path(c, config_root, project_root))
        .filter_map(|g| {
            let covers = if g.contains(&store) {
                Some(store.clone())
            } else {
                // An owned entry the grant holds, or (inside one: an
                // installed copy, a file of it) the path it reaches there.
                STORE_OWNED
                    .iter()
                    .map(|e| store.join(e))
                    .find(|owned| g.overlaps(owned))
                    .map(|owned| match g.contains(&owned) {
                        true => owned,
                        false => g.resolved.clone(),
                    })
            }?;
            Some(StoreGrant {
                capability: g.capability,
                path: g.resolved,
                covers,
            })
        })
        .collect()
}

/// A temporary directory for a simulated plugin store (the conformance
/// suite's install, `cargo kaged test`'s) that no grant of the plugin in
/// `plugin_dir` reaches, so that a plugin asking `write:fs:/tmp` is not
/// refused for where a tool chose to put its scratch store: under the
/// system's temporary directory, else `/var/tmp`, else `$HOME/.cache`;
/// under the system's when every one is reached (install then names the
/// grant). Among those, one on the plugin directory's file system comes
/// first, so that [`CopyMode::HardLinks`](super::CopyMode::HardLinks) can
/// link instead of copying.
pub fn scratch_store_dir(plugin_dir: &Path) -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::MetadataExt;
    let capabilities = kaged_host_core::validate::validate_dir(plugin_dir)
        .manifest
        .map(|m| m.capability_strings())
        .unwrap_or_default();
    let home_cache = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache"));
    let mut candidates: Vec<PathBuf> = [
        Some(std::env::temp_dir()),
        Some("/var/tmp".into()),
        home_cache,
    ]
    .into_iter()
    .flatten()
    .collect();
    let device = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
    let plugin_device = device(plugin_dir);
    // Stable: the plugin's file system first, the order above otherwise.
    candidates.sort_by_key(|c| plugin_device.is_none() || device(c) != plugin_device);
    for base in candidates {
        let clear = |dir: &Path| grants_over_store(&capabilities, dir, None, None).is_empty();
        if !base.is_dir() || !clear(&base.join("kaged-scratch")) {
            continue;
        }
        if let Ok(dir) = tempfile::tempdir_in(&base) {
            return Ok(dir);
        }
    }
    tempfile::tempdir()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn over(caps: &[&str], store: &Path, config_root: Option<&Path>) -> Vec<String> {
        let caps: Vec<String> = caps.iter().map(|c| c.to_string()).collect();
        grants_over_store(&caps, store, config_root, None)
            .into_iter()
            .map(|g| g.capability)
            .collect()
    }

    #[test]
    fn grants_reaching_the_store_or_what_it_owns_are_named() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = resolved_path(tmp.path());
        let store = root.join("kaged");
        let s = store.display();
        let caps = [
            format!("write:fs:{s}/plugins/echo"),
            format!("read:fs:{s}/config.toml"),
            format!("write:fs:{}", root.display()),
            format!("exec:git:{s}/plugins"),
            format!("read:fs:{s}/daemon.json"),
            format!("write:fs:{s}/notes"),
            format!("read:fs:{s}-other"),
            "net:*".to_string(),
        ];
        let caps: Vec<&str> = caps.iter().map(String::as_str).collect();
        assert_eq!(over(&caps, &store, None), caps[..5].to_vec());
        let grants = grants_over_store(&[caps[2].to_string()], &store, None, None);
        assert_eq!(grants[0].covers, store, "an ancestor covers the store root");
    }

    #[test]
    fn a_scratch_store_is_made_where_no_grant_reaches() {
        let plugin = tempfile::tempdir().expect("tempdir");
        let tmp = resolved_path(&std::env::temp_dir());
        std::fs::write(
            plugin.path().join("kaged-plugin.yaml"),
            format!(
                "name: demo\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [./run]\n\
                 capabilities: ['write:fs:{}']\n",
                tmp.display()
            ),
        )
        .expect("write");
        let scratch = scratch_store_dir(plugin.path()).expect("a scratch dir");
        let caps = [format!("write:fs:{}", tmp.display())];
        if Path::new("/var/tmp").is_dir() && !tmp.starts_with("/var/tmp") {
            assert!(
                grants_over_store(&caps, scratch.path(), None, None).is_empty(),
                "{}",
                scratch.path().display()
            );
        }
    }

    #[test]
    fn config_grants_resolve_under_the_config_root() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = resolved_path(tmp.path());
        // The config root is the store: only what the store owns is refused.
        assert_eq!(
            over(
                &[
                    "write:fs:config:/memory",
                    "write:fs:config:/plugins/x",
                    "read:fs:config:/"
                ],
                &root,
                Some(&root)
            ),
            ["write:fs:config:/plugins/x", "read:fs:config:/"]
        );
    }
}
