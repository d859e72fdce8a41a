//! A [`CagePolicy`] in brief, for reports: what the plugin may read and
//! write beyond the system runtime, the network, seccomp and cgroup.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::base::{BECAUSE_ETC, BECAUSE_NETWORK, BECAUSE_SYSTEM};
use super::cgroup::CgroupState;
use super::policy::{CagePolicy, Mode, Mount, NetMode};

/// The policy in brief.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CageSummary {
    /// Read-only binds other than the system runtime and `/etc` files (the
    /// install directory, `read:fs:` grants, the command).
    pub read_only: Vec<PathBuf>,
    /// Read-write binds (`write:fs:`, `exec:` working directories).
    pub read_write: Vec<PathBuf>,
    /// `none`, `shared (grants...)` or `filtered (grants...)`.
    pub network: String,
    /// The seccomp profile (`default`).
    pub seccomp: String,
    /// `applied (...)` or `unavailable (why)`.
    pub cgroup: String,
    /// The Landlock layer in brief (`tcp 443; scoped`, `unavailable`).
    #[serde(default)]
    pub landlock: String,
    /// Who the plugin runs as (`uid 1900012345`, `host uid 1000`).
    #[serde(default)]
    pub user: String,
}

impl CageSummary {
    /// One line: `ro A, B; rw C; network none; seccomp default; cgroup
    /// unavailable; landlock scoped; uid 1900012345` (the cgroup's details,
    /// why it is unavailable, stay in [`CageSummary::cgroup`]).
    pub fn line(&self) -> String {
        let list = |v: &[PathBuf]| {
            if v.is_empty() {
                "nothing".to_string()
            } else {
                v.iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        format!(
            "ro {}; rw {}; network {}; seccomp {}; cgroup {}; landlock {}; {}",
            list(&self.read_only),
            list(&self.read_write),
            self.network,
            self.seccomp,
            self.cgroup.split(" (").next().unwrap_or_default(),
            self.landlock,
            self.user
        )
    }
}

impl CagePolicy {
    /// The policy in brief (see [`CageSummary`]).
    pub fn summary(&self) -> CageSummary {
        let base = [
            BECAUSE_SYSTEM,
            BECAUSE_ETC,
            BECAUSE_NETWORK,
            super::init::BECAUSE_INIT,
        ];
        let mut read_only = Vec::new();
        let mut read_write = Vec::new();
        for m in &self.mounts {
            if let Mount::Bind {
                dest,
                mode,
                missing,
                because,
                ..
            } = m
            {
                if *missing || because.iter().all(|b| base.contains(&b.as_str())) {
                    continue;
                }
                match mode {
                    Mode::Ro => read_only.push(dest.clone()),
                    Mode::Rw => read_write.push(dest.clone()),
                }
            }
        }
        let network = match self.net.mode {
            NetMode::None => "none".to_string(),
            NetMode::Shared => format!("shared ({})", self.net.grants.join(", ")),
            NetMode::Filtered => format!("filtered ({})", self.net.grants.join(", ")),
        };
        let cgroup = match &self.cgroup.state {
            CgroupState::Applied { path, failed, .. } if failed.is_empty() => {
                format!("applied ({})", path.display())
            }
            CgroupState::Applied { path, failed, .. } => {
                format!(
                    "partly applied ({}; not: {})",
                    path.display(),
                    failed.join("; ")
                )
            }
            CgroupState::Available { .. } | CgroupState::AvailableV1 { .. } => {
                "available, not applied".to_string()
            }
            CgroupState::Unavailable { reason } => format!("unavailable ({reason})"),
        };
        CageSummary {
            read_only,
            read_write,
            network,
            seccomp: self.seccomp.profile.clone(),
            cgroup,
            landlock: self.landlock.line(),
            user: self.user.line(),
        }
    }
}
