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
pub mod firing;
pub mod host;
pub mod install;
mod observe;
mod plugin;
mod requests;
pub mod storage;
pub mod supervisor;
pub mod testing;
pub mod time;
pub mod validate;

// Transitional: the old module paths (replaced by the front door next).
pub use observe::{audit, one_line, reference, transcript};
pub use plugin::session::{call, health, shutdown};
pub use plugin::{connection, handshake, probe, process, session, spawn};
pub use requests::{handler, in_flight, storage as storage_handler};
