//! # kaged-host-engine
//!
//! What the kaged daemon does with plugins beyond running one, without its
//! HTTP front: projects resolved against manifests ([`agents`]), hooks
//! fired on agent paths and the compactor contract ([`AgentHost`]), the
//! plugin store and its install flow ([`PluginStore`]). Built on
//! `kaged-host-core` (running plugins) and `kaged-host-storage` (the
//! storage broker); `kaged-host-sim` adds the HTTP daemon and the CLI.
//!
//! ## Layers
//!
//! <!-- layers: scenario > firing install > agents -->
//!
//! ```text
//!  firing   AgentHost: hooks fired on agent paths, compaction, knobs
//!  install  the plugin store (install flow), over storage and validation
//!  scenario scripted steps run against a plugin session
//!  agents   projects resolved against manifests (pure logic)
//! ```

pub mod agents;
mod firing;
mod install;
pub mod scenario;

// Projects and their hooks.
pub use firing::{
    check_must_exist, AgentHost, AgentHostError, CompactRequest, CompactionOutcome, FailedPlugin,
    IdleOutcome, KnobRoots, KnobWrite, KnobWriteError, KnobWriteRequest, KnobWritten, PluginDirs,
    SessionStart,
};

// Installing plugins.
pub use install::{
    cargo_target_dir, covered_by, grants_over_store, installed_copy, manifest_digest,
    package_packed_dir, packed_dir, reconsent_command, scratch_store_dir, ConsentCheck, CopyMode,
    Fetched, InstallError, InstallPlan, InstalledPlugin, InstalledSize, LeftOut, LeftOutReason,
    PackageSource, PluginStore, StoreGrant, Uninstalled, Upgrade, UpgradeRestart, KAGEDIGNORE_FILE,
    LARGE_COPY_BYTES, STORE_OWNED,
};
