//! The cage: every plugin runs inside bwrap, with a policy compiled from
//! its capabilities (plugin-host.md § Capability → cage policy
//! translation; ADDENDUM §13).
//!
//! ```text
//!  Manifest + CageInputs ──compile──▶ CagePolicy ──bwrap_argv──▶ bwrap argv
//!  (install dir, spawn env,            (mounts, net, exec,        + --seccomp FD
//!   command, roots, cgroup)             env, seccomp, cgroup)       (seccomp::default_program)
//! ```
//!
//! [`compile_with`] is pure over a [`FsView`] ([`MemFs`] in tests);
//! [`compile`] uses the real filesystem. [`seccomp`] builds the BPF
//! program, [`cgroup`] detects and applies the limits, [`net_filter`]
//! enforces `net:HOST:PORT` grants (a filtered network: the cage's own
//! namespace, the connects made by the host; [`net_grants`] the stand-in
//! addresses of its hosts file).
//!
//! The spawner (`plugin::caged`) runs every plugin through it, as
//! [`CageMode`] says; [`availability`] tells whether bwrap works here;
//! [`CageStatus`] is what one spawn got (reports and `plugin.spawned`).

mod available;
mod base;
mod bwrap;
pub mod cgroup;
mod compile;
mod error;
mod fs_view;
mod grant_path;
mod grants;
mod idmap;
pub mod init;
mod inputs;
pub mod kernel;
pub mod landlock_fs;
pub mod landlock_layer;
pub mod landlock_rules;
pub mod limits;
mod merge;
mod mode;
mod nesting;
pub mod net_filter;
pub mod net_grants;
mod policy;
pub mod race_hook;
mod render;
mod resolve;
pub mod seccomp;
mod sources;
pub mod stage;
mod summary;
mod user;

pub use available::{availability, bwrap_path, BWRAP_ENV};
pub use base::{ETC_FILES, ETC_NETWORK, SYSTEM_PATHS};
pub use bwrap::{BindSource, CageFds, BWRAP, INFO_FD_SLOT, SECCOMP_FD_SLOT};
pub use cgroup::{CgroupLimits, CgroupPolicy, CgroupState};
pub use compile::{compile, compile_with, BECAUSE_COMMAND, BECAUSE_INSTALL_DIR};
pub use error::CageError;
pub use fs_view::{FsView, HostFs, MemFs, Node};
pub use grant_path::{grant_path, resolved_path, GrantPath};
pub use grants::{config_grant_dirs, consent_target, create_config_grants, SPAWN_PATH};
pub use inputs::CageInputs;
pub use landlock_layer::{LandlockPolicy, LandlockSupport};
pub use limits::{CageLimits, Rlimit};
pub use mode::{CageKind, CageMode, CageModeError, CageStatus};
pub use nesting::{grant_paths, nested_in_writable};
pub use net_grants::{NetGrant, NetHost, StandIn};
pub use policy::{
    Access, CagePolicy, ExecGrant, Mode, Mount, NetMode, NetPolicy, NET_FILTERED, NET_SHARED,
};
pub use resolve::{normalize, resolve, ResolveFailure, Resolved};
pub use seccomp::{SeccompPolicy, SeccompProgram};
pub use sources::{open_no_links, OpenedBinds};
pub use summary::CageSummary;
pub use user::{CageUser, PluginIds, IDS_ENV};
