//! One plugin process as the host runs it, bottom to top: spawning it
//! ([`spawn`], through the cage: `caged`), its life and end ([`process`]), the JSON-RPC connection
//! over its stdio ([`connection`]), the handshake ([`handshake`]), and the
//! [`handle`] the rest of the host holds (calls, health checks, graceful
//! shutdown). [`probe`] watches process groups from `/proc` for the
//! conformance suite.

mod cage_child;
mod cage_inputs;
mod caged;
pub mod connection;
mod fds;
pub mod handle;
pub mod handshake;
mod parent_death;
pub mod probe;
pub mod process;
pub mod quiet;
pub mod spawn;

pub use cage_inputs::inputs_for_dir as cage_inputs_for_dir;
pub use connection::{Phase, RequestError};
pub use handle::{
    CallError, FirstConfig, FirstConfigSent, HealthMonitor, PingSample, PluginHandle, RawChannel,
    RequestIds, ShutdownOutcome,
};
pub use handshake::{canonical_capability, HandshakeError, HandshakeInfo};
pub use process::{group_alive, ExitInfo};
pub use spawn::{resolve_command, SpawnError, CONFIG_ROOT_ENV};
