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
//! below this one (no HTTP server), and name every item by the crate that
//! defines it (`kaged_host_core::HostSim`): this crate re-exports nothing
//! of theirs (one path to each item; CHANGELOG.md lists where each moved).
//!
//! ## Layers
//!
//! <!-- layers: daemon > bench in_process -->
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

#[cfg(feature = "daemon")]
pub mod bench;
#[cfg(feature = "daemon")]
pub mod daemon;
mod in_process;

pub use in_process::ConnectPlugin;

/// The README's examples (the crate's page on crates.io), compiled as
/// doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
