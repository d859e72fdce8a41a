//! # kaged-host-core
//!
//! The host side of the kaged plugin protocol, and nothing else: spawning a
//! plugin in its cage, the JSON-RPC 2.0 connection over its stdio, the
//! handshake, calls with context, health checks, graceful shutdown, the
//! audit log, wire transcripts and manifest validation. No SQL (the storage
//! broker is `kaged-host-storage`, behind [`PluginRequestHandler`]), no
//! HTTP and no plugin SDK.
//!
//! ## Layers
//!
//! Each module imports only from modules on its own line or below it
//! (`scripts/module-layers.py` checks it in CI); the line below is what it
//! reads.
//!
//! <!-- layers: supervisor testing > host > plugin > requests > cage > observe > validate > time bounds names cli_stdout progress -->
//!
//! ```text
//!  supervisor  Supervisor: one plugin kept alive, restart policy
//!  testing     staging a cargo-built plugin for tests
//!  host        HostSim: validate, spawn, handshake -> PluginHandle
//!  plugin      handle: call, health checks, shutdown; handshake;
//!              connection: JSON-RPC 2.0 over line-delimited stdio;
//!              process, spawn, probe: the OS process and its group
//!  requests    plugin-to-host requests: PluginRequestHandler, InFlight
//!  cage        manifest -> CagePolicy -> bwrap argv, seccomp, cgroup
//!  observe     audit log, wire transcript, generated reference
//!  validate    manifest validation
//!  time        every timeout, scaled     bounds   every size limit
//!  names       name_table!: enums whose variants are names (audit, rules)
//!  cli_stdout  outln!/out!: a command line's stdout, a closed pipe its end
//!  progress    a long run's progress line, on a terminal only
//! ```
//!
//! [`HostSim`] launches a plugin directory (validate, spawn, handshake) or
//! connects to an in-process peer, giving a [`PluginHandle`] to call,
//! notify and shut down.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use kaged_host_core::{HostConfig, HostSim, TimeScale};
//! let host = HostSim::new(HostConfig::default().with_time_scale(TimeScale::new(0.1)?));
//! let plugin = host.launch("plugins/echo".as_ref()).await?;
//! let out = plugin.call("echo.say", Some(serde_json::json!({"text": "hi"})), None).await?;
//! println!("{out}");
//! plugin.shutdown().await;
//! # Ok(()) }
//! ```

pub mod bounds;
pub mod cage;
pub mod cli_stdout;
mod host;
mod names;
mod observe;
mod plugin;
pub mod progress;
mod requests;
mod supervisor;
pub mod testing;
pub mod time;
pub mod validate;

// Running plugins.
#[doc(no_inline)]
pub use cage::{CageKind, CageMode, CageStatus};
pub use host::{HostConfig, HostSim, LaunchError};
pub use plugin::{
    cage_inputs_for_dir, canonical_capability, group_alive, resolve_command, CallError, ExitInfo,
    FirstConfig, FirstConfigSent, HandshakeError, HandshakeInfo, HealthMonitor, Phase, PingSample,
    PluginHandle, RawChannel, RequestError, RequestIds, ShutdownOutcome, SpawnError,
    CONFIG_ROOT_ENV,
};
pub use supervisor::health;
pub use supervisor::{PluginState, StartGate, StartRefusal, Supervisor, SupervisorError};
#[doc(no_inline)]
pub use time::{TimeScale, Timeouts};

// Requests from plugins.
pub use requests::{
    deny_unavailable_storage, DefaultHandler, InFlight, InFlightWaiter, PluginRequestHandler,
    RequestContext, STORAGE_UNAVAILABLE,
};

// What the host records: whole modules (`audit`, `transcript`, the
// normal form, golden transcripts and the generated `reference` of
// docs/protocol.md), their main types at the root too.
pub use kaged_plugin_protocol::error_chain::one_line;
pub use observe::{audit, golden, last_words, normal, reference, transcript, violation, visible};
#[doc(no_inline)]
pub use observe::{AuditEvent, AuditLog, AuditRecord, Direction, Transcript, TranscriptRecord};
#[doc(no_inline)]
pub use validate::validate_dir;

// Process probes for conformance checks.
pub use plugin::probe;
// Waiting until a plugin has had its say.
pub use plugin::quiet;
