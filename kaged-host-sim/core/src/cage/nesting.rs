//! No grant inside a writable grant (ADDENDUM §16: "a grant nested inside
//! another writable grant is a manifest or project error").
//!
//! bwrap creates each bind's destination by walking its parents inside the
//! cage; a parent that lies in a writable bind is a host directory that
//! someone else may write (a concurrent copy of the plugin, another plugin
//! with the same grant, any host process), and could be swapped for a
//! symlink while the cage is built, redirecting the bind. So within one
//! cage, no mount may lie strictly inside a read-write bind
//! ([`check_policy`], called by the compiler), and under `up` no plugin's
//! grant may lie strictly inside another plugin's writable grant
//! ([`nested_in_writable`] over [`grant_paths`]). The same path granted
//! twice is not nesting: a bind's own root is a mount point, which nobody
//! can swap.

use kaged_plugin_protocol::manifest::Manifest;

use super::error::CageError;
use super::grant_path::{grant_path, GrantPath};
use super::inputs::CageInputs;
use super::policy::{Mode, Mount};

/// The path grants of `manifest` under `inputs`' roots ([`grant_path`]);
/// a capability that does not parse or has no root is left out (the
/// compiler reports it).
pub fn grant_paths(manifest: &Manifest, inputs: &CageInputs) -> Vec<GrantPath> {
    manifest
        .capabilities
        .iter()
        .filter_map(|entry| {
            grant_path(
                &entry.canonical(),
                inputs.config_root.as_deref(),
                inputs.project_root.as_deref(),
            )
        })
        .collect()
}

/// The first of `inner` that lies strictly inside a writable one of
/// `outer`, with that one.
pub fn nested_in_writable<'a>(
    inner: &'a [GrantPath],
    outer: &'a [GrantPath],
) -> Option<(&'a GrantPath, &'a GrantPath)> {
    inner.iter().find_map(|i| {
        outer
            .iter()
            .find(|o| o.writable && i.declared != o.declared && i.declared.starts_with(&o.declared))
            .map(|o| (i, o))
    })
}

/// Refuse a cage with any mount strictly inside a read-write bind.
pub(crate) fn check_policy(mounts: &[Mount]) -> Result<(), CageError> {
    for outer in mounts {
        let Mount::Bind {
            dest: outer_dest,
            mode: Mode::Rw,
            because: outer_why,
            ..
        } = outer
        else {
            continue;
        };
        for inner in mounts {
            let dest = inner.dest();
            if dest == outer_dest || !dest.starts_with(outer_dest) {
                continue;
            }
            let inner_why = match inner {
                Mount::Bind { because, .. } => because.join(", "),
                Mount::Tmpfs { .. } => "the cage's tmpfs".to_string(),
                Mount::Sealed { .. } => "a sealed root".to_string(),
                Mount::HostsFile { .. } => "the cage's hosts file".to_string(),
                Mount::Symlink { .. } => "a system symlink".to_string(),
                Mount::Proc { .. }
                | Mount::Dev { .. }
                | Mount::KernelReadOnly { .. }
                | Mount::Masked { .. } => "a kernel view".to_string(),
            };
            return Err(CageError::NestedInWritable {
                inner: inner_why,
                inner_path: dest.to_path_buf(),
                outer: outer_why.join(", "),
                outer_path: outer_dest.clone(),
            });
        }
    }
    Ok(())
}
