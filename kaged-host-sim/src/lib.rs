//! # kaged-host-sim
//!
//! A simulated kaged daemon and its command line, on top of the host
//! crates it is built from:
//!
//! ```text
//!  kaged-host-sim      this crate: the `up` daemon (HTTP API, settings
//!                      page), `bench`, in-process SDK plugins, the CLI
//!  kaged-host-engine   projects and agents, hook firing, compaction,
//!                      the plugin store, scenarios
//!  kaged-host-storage  the SQLite broker behind kaged.storage.*
//!  kaged-host-core     spawn (in the cage), connection, handshake, calls,
//!                      shutdown, audit log, transcripts, validation
//! ```
//!
//! The conformance suite and a plugin's own tests need only the crates
//! below this one (no HTTP server); this crate re-exports their items at
//! the paths they had before the split, so code written against
//! `kaged_host_sim::HostSim` keeps compiling (each item is documented once,
//! in its own crate; CHANGELOG.md lists where each moved).
//!
//! ## Layers
//!
//! <!-- layers: daemon > bench in_process -->
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use kaged_host_sim::{HostConfig, HostSim, TimeScale};
//! let host = HostSim::new(HostConfig::default().with_time_scale(TimeScale::new(0.1)?));
//! let session = host.launch("plugins/echo".as_ref()).await?;
//! let out = session.call("echo.say", Some(serde_json::json!({"text": "hi"})), None).await?;
//! println!("{out}");
//! session.shutdown().await;
//! # Ok(()) }
//! ```

#[cfg(feature = "daemon")]
pub mod bench;
#[cfg(feature = "daemon")]
pub mod daemon;
mod in_process;

pub use in_process::ConnectPlugin;

// The crates below, whole.
#[doc(no_inline)]
pub use kaged_host_core as core;
#[doc(no_inline)]
pub use kaged_host_engine as engine;
#[doc(no_inline)]
pub use kaged_host_storage as storage;

// Their modules and items, at the paths they had before the split.
#[doc(no_inline)]
pub use kaged_host_core::{
    audit, bounds, cage, golden, normal, probe, reference, testing, time, transcript, validate,
};
#[doc(no_inline)]
pub use kaged_host_core::{
    cage_inputs_for_dir, canonical_capability, group_alive, one_line, resolve_command,
    validate_dir, AuditEvent, AuditLog, AuditRecord, CageKind, CageMode, CageStatus, CallError,
    DefaultHandler, Direction, ExitInfo, FirstConfig, FirstConfigSent, HandshakeError,
    HandshakeInfo, HealthMonitor, HostConfig, HostSim, InFlight, InFlightWaiter, LaunchError,
    Phase, PluginHandle, PluginRequestHandler, PluginState, RawChannel, RequestContext,
    RequestError, ShutdownOutcome, SpawnError, StartGate, StartRefusal, Supervisor,
    SupervisorError, TimeScale, Timeouts, Transcript, TranscriptRecord, CONFIG_ROOT_ENV,
};
#[doc(no_inline)]
pub use kaged_host_engine::assert_transcript_snapshot;
#[doc(no_inline)]
pub use kaged_host_engine::{
    agents, installed_copy, scenario, AgentHost, AgentHostError, CompactRequest, CompactionOutcome,
    ConsentCheck, FailedPlugin, IdleOutcome, InstallError, InstallPlan, InstalledPlugin,
    InstalledSize, KnobWrite, KnobWriteError, KnobWriteRequest, KnobWritten, LeftOut,
    LeftOutReason, PluginDirs, PluginStore, SessionStart, StoreGrant, Uninstalled, Upgrade,
    UpgradeRestart, KAGEDIGNORE_FILE,
};
#[doc(no_inline)]
pub use kaged_host_storage::{BrokerHandler, StorageBroker};

/// The handle on one running plugin, by its name before the split: a
/// "session" is an agent's session now, and nothing else.
#[deprecated(
    since = "0.1.0",
    note = "renamed `PluginHandle` (kaged_host_core::PluginHandle)"
)]
pub type PluginSession = PluginHandle;

/// The README's examples (the crate's page on crates.io), compiled as
/// doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
