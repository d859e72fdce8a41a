//! # kaged-host-sim
//!
//! A simulated kaged daemon: the only daemon-side code of this workspace.
//! Its CLI, the conformance suite and every test drive it.
//!
//! * [`host::HostSim`] launches a plugin directory (validate, spawn,
//!   handshake) or connects to an in-process peer, giving a
//!   [`session::PluginSession`] to call, notify and shut down.
//! * [`time`] holds every timeout (scaled by `--time-scale`), [`audit`] every
//!   audit event name, [`transcript`] the wire transcript.

pub mod agents;
pub mod audit;
pub mod call;
pub mod cli;
pub mod connection;
pub mod firing;
pub mod handler;
pub mod handshake;
pub mod health;
pub mod host;
pub mod in_flight;
pub mod install;
pub mod probe;
pub mod process;
pub mod reference;
pub mod session;
pub mod shutdown;
pub mod spawn;
pub mod storage;
pub mod storage_handler;
pub mod supervisor;
pub mod testing;
pub mod time;
pub mod transcript;
pub mod validate;
