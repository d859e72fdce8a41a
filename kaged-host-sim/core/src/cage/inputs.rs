//! What the cage compiler needs besides the manifest: the install
//! directory, the spawn environment, the resolved command, the roots of
//! `config:/` and `project:/` paths, and the cgroup state detected.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::cgroup::CgroupState;
use super::landlock_layer::LandlockSupport;
use super::user::PluginIds;

/// The inputs of [`crate::cage::compile`] other than the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CageInputs {
    /// The plugin's install directory (absolute): bound read-only at its
    /// own path, the working directory and `HOME`.
    pub install_dir: PathBuf,
    /// The spawn environment (plugin-host.md § Spawn environment, the
    /// manifest's `env` merged): the whole environment of the cage.
    pub env: BTreeMap<String, String>,
    /// `command[0]`, resolved: bound read-only when no other bind shows it
    /// (a binary built outside the plugin directory). `None`: not checked.
    pub command: Option<PathBuf>,
    /// The operator's config root, for `config:/` paths (ADDENDUM §3).
    pub config_root: Option<PathBuf>,
    /// The project root, for `project:/` paths (ADDENDUM §3).
    pub project_root: Option<PathBuf>,
    /// The cgroup state (see [`crate::cage::cgroup::detect`]).
    pub cgroup: CgroupState,
    /// What this kernel's Landlock enforces
    /// ([`crate::cage::LandlockSupport::detect`]; nothing until detected).
    pub landlock: LandlockSupport,
    /// The uid the host runs as (0: each plugin gets its own id from
    /// `ids`; see [`crate::cage::CageUser`]).
    pub host_uid: u32,
    /// The plugin id range (`$KAGED_PLUGIN_IDS`).
    pub ids: PluginIds,
}

impl CageInputs {
    /// Inputs with no command check, no roots, cgroup "not detected", this
    /// process's uid and the default plugin id range.
    pub fn new(install_dir: impl Into<PathBuf>, env: BTreeMap<String, String>) -> CageInputs {
        CageInputs {
            install_dir: install_dir.into(),
            env,
            command: None,
            config_root: None,
            project_root: None,
            cgroup: CgroupState::Unavailable {
                reason: "not detected".to_string(),
            },
            landlock: LandlockSupport::default(),
            host_uid: rustix::process::geteuid().as_raw(),
            ids: PluginIds::DEFAULT,
        }
    }
}
