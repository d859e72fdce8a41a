//! The daemon, running (`kaged-host-sim up`): every enabled plugin under
//! its own [`Supervisor`](kaged_host_core::Supervisor), one human line per lifecycle
//! event, and the daemon's HTTP API on loopback ([`api`]), which trusts no
//! caller for being on loopback (a token, `Host` and `Origin` checked:
//! [`api::guard`]).
//!
//! * [`discover`] reads the enabled-plugins list as the daemon does (spec
//!   Spawn step 1): the enabled entries of a plugin store, or every plugin
//!   directory under a `--plugins` root.
//! * [`ConsentGate`] checks, before every start of a store's plugin, that
//!   its manifest asks no more than was consented at install (ADDENDUM
//!   §16): refused, it stays `disabled`, audited
//!   `plugin.capability_overreach`.
//! * [`Daemon::start_all`] starts every plugin at once: a plugin that fails
//!   to start ends `failed` or `disabled` on its own and never blocks the
//!   others.
//! * [`Daemon::shutdown`] runs the graceful shutdown ladder of every plugin
//!   concurrently.
//! * [`lifecycle_line`] renders one audit record as the human line `up`
//!   prints.
//!
//! Knob writes at daemon level ([`Daemon::write_knob`]) change the
//! plugin's daemon-side project config: validated against the knob's
//! bounds and `config_schema`, sent with `config.update`, audited
//! `plugin.knob_write`.

pub mod api;
mod consent_gate;
mod discover;
mod error;
mod history;
mod in_force;
mod knobs;
mod lines;
pub mod link;
mod managed;
mod overlap;
mod pending;
mod project;
mod running;
mod status;

pub use consent_gate::{ConsentGate, Refusal};
pub use discover::{discover, PluginSource};
pub use error::DaemonError;
pub use history::HISTORY_LEN;
pub use knobs::KnobView;
pub use lines::{is_lifecycle, lifecycle_line};
pub use pending::{PendingError, PendingInstall, PendingInstalls, PendingState, PlanView};
pub use project::{DaemonProject, DEFAULT_API_SESSION};
pub use running::{Daemon, DaemonOptions};
pub use status::PluginStatus;
