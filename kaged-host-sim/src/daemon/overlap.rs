//! No plugin's grant inside another plugin's writable grant (ADDENDUM §16:
//! "a grant nested inside another writable grant is a manifest or project
//! error"). Under `up` the plugins share the operator's config root: a
//! plugin that writes `config:/shared` could swap a parent of another's
//! `config:/shared/data` while that one's cage is built. The inner plugin
//! is not started (`plugin.failed` and `plugin.disabled` with
//! `reason: "nested_grant"`, naming both grants); each plugin's own
//! nesting is refused by its validation and its cage compile.

use std::path::PathBuf;

use kaged_host_core::cage::{grant_paths, nested_in_writable, CageInputs};
use kaged_host_core::HostConfig;
use kaged_plugin_protocol::manifest::Manifest;

/// Why the plugin at each index may not start, when its grants lie inside
/// another plugin's writable grant.
pub(super) fn refusals(
    config: &HostConfig,
    dirs: &[PathBuf],
    manifests: &[Option<Manifest>],
) -> Vec<Option<String>> {
    let grants: Vec<Vec<kaged_host_core::cage::GrantPath>> = dirs
        .iter()
        .zip(manifests)
        .map(|(dir, m)| {
            let Some(m) = m else { return Vec::new() };
            let mut inputs = CageInputs::new(dir, Default::default());
            inputs.config_root = config.config_root.clone();
            inputs.project_root = config.project_root.clone();
            grant_paths(m, &inputs)
        })
        .collect();
    (0..grants.len())
        .map(|i| {
            let (owner, (inner, o)) = (0..grants.len()).filter(|j| *j != i).find_map(|j| {
                let owner = manifests[j].as_ref().map_or("?", |m| m.name.as_str());
                Some((owner, nested_in_writable(&grants[i], &grants[j])?))
            })?;
            Some(format!(
                "`{}` ({}) lies inside plugin {owner}'s writable grant `{}` ({}): a grant \
                 nested in another plugin's writable grant is refused (ADDENDUM §16); the \
                 operator removes one of the two plugins or changes a grant",
                inner.capability,
                inner.declared.display(),
                o.capability,
                o.declared.display()
            ))
        })
        .collect()
}
