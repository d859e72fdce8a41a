//! # kaged-host-sim
//!
//! A simulated kaged daemon: the only daemon-side code of this workspace.
//! Its command line (`src/bin/kaged-host-sim/`), the conformance suite and
//! every test drive it, through the items below.
//!
//! ## Layers
//!
//! ```text
//!  kaged-host-sim CLI (src/bin/)    kaged-conformance    tests, examples
//!              |                            |
//!              v                            v
//!  firing      AgentHost: hooks fired on agent paths
//!              (agents: projects resolved against manifests, pure logic)
//!  supervisor  Supervisor: one plugin kept alive, restart policy
//!              |
//!              v
//!  host        HostSim: validate, spawn, handshake -> PluginSession
//!              |
//!              v
//!  plugin      session: call, health checks, shutdown; handshake
//!              connection: JSON-RPC 2.0 over line-delimited stdio
//!              process, spawn, probe: the OS process and its group
//!              |
//!              v
//!  requests    plugin-to-host requests: PluginRequestHandler,
//!              BrokerHandler, InFlight
//!  storage     the SQLite broker behind kaged.storage.*
//!
//!  install     the plugin store (install flow), over storage and validate
//!  cage        manifest -> CagePolicy -> bwrap argv, seccomp, cgroup
//!  observe     audit log, wire transcript, generated reference (every layer)
//!  validate    manifest validation        time   every timeout, scaled
//! ```
//!
//! [`HostSim`] launches a plugin directory (validate, spawn, handshake) or
//! connects to an in-process peer, giving a [`PluginSession`] to call,
//! notify and shut down. [`time`] holds every timeout (scaled by
//! `--time-scale`), [`audit`] every audit event name, [`transcript`] the
//! wire transcript.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use kaged_host_sim::{HostConfig, HostSim, TimeScale};
//! let host = HostSim::new(HostConfig { time_scale: TimeScale::new(0.1)?, ..HostConfig::default() });
//! let session = host.launch("plugins/echo".as_ref()).await?;
//! let out = session.call("echo.say", Some(serde_json::json!({"text": "hi"})), None).await?;
//! println!("{out}");
//! session.shutdown().await;
//! # Ok(()) }
//! ```

pub mod agents;
pub mod bench;
pub mod bounds;
pub mod cage;
pub mod daemon;
mod firing;
mod host;
mod install;
mod observe;
mod plugin;
mod requests;
pub mod scenario;
pub mod storage;
mod supervisor;
pub mod testing;
pub mod time;
pub mod validate;

// Running plugins.
pub use host::{HostConfig, HostSim, LaunchError};
pub use plugin::{
    canonical_capability, group_alive, resolve_command, CallError, ExitInfo, HandshakeError,
    HandshakeInfo, HealthMonitor, Phase, PluginSession, RawChannel, RequestError, ShutdownOutcome,
    SpawnError, CONFIG_ROOT_ENV,
};
// The cage every plugin runs in (the whole module is `cage`).
pub use cage::{CageKind, CageMode, CageStatus};
pub use supervisor::{PluginState, Supervisor, SupervisorError};
pub use time::{TimeScale, Timeouts};

// Projects and their hooks.
pub use firing::{
    AgentHost, AgentHostError, CompactRequest, CompactionOutcome, FailedPlugin, IdleOutcome,
    KnobWrite, KnobWriteError, PluginDirs, SessionStart,
};

// Requests from plugins, and storage.
pub use requests::{
    BrokerHandler, DefaultHandler, InFlight, InFlightWaiter, PluginRequestHandler, RequestContext,
};
pub use storage::StorageBroker;

// Installing plugins and checking manifests.
pub use install::{
    installed_copy, InstallError, InstallPlan, InstalledPlugin, InstalledSize, LeftOut,
    LeftOutReason, PluginStore, Uninstalled, Upgrade, KAGEDIGNORE_FILE,
};
pub use validate::validate_dir;

// What the host records (whole modules: `audit`, `transcript`, and the
// generated `reference` of docs/protocol.md).
pub use observe::{audit, golden, normal, reference, transcript};
pub use observe::{
    one_line, AuditEvent, AuditLog, AuditRecord, Direction, Transcript, TranscriptRecord,
};

// Process probes for conformance checks.
pub use plugin::probe;

/// The README's examples (the crate's page on crates.io), compiled as
/// doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
