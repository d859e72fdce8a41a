//! A filtered network ([`NetMode::Filtered`](super::NetMode)): `net:HOST:PORT`
//! and `net:HOST:*` enforced (ADDENDUM §16 "`net:` grants are enforced",
//! issue 45) by intercepting `connect(2)` with a seccomp user notification
//! and making the granted connects in the host.
//!
//! ```text
//!  spawn child ── notify::enter ──▶ filter (connect, listen → the host) ── listener ──┐
//!   └─ bwrap, own empty netns                                                        │ SCM_RIGHTS
//!        └─ plugin: connect(fd, 198.18.0.1:443) ── waits ──▶ supervisor (host, tokio) ◀┘
//!                                                  decide: granted? (decide.rs)
//!                                                  host connects api.example.com:443 (forward.rs)
//!             connect returns 0 ◀── ADDFD(SETFD fd) + answer 0
//! ```
//!
//! The cage's own network namespace is what makes it safe: whatever the
//! kernel runs in the cage (a connect answered "continue") reaches only the
//! cage's loopback, never a host service or a host abstract unix socket.
//! The socket the host hands over is the only way out, made to the granted
//! target only. What is enforced is stated in [`NET_FILTERED`](super::NET_FILTERED)
//! and docs/authoring.md § The cage.

pub mod decide;
pub mod forward;
pub mod notify;
pub mod supervisor;
mod sys;

pub use decide::{Decision, NetRules, Route, Target};
pub use notify::{ChildSide, HostSide};
pub use supervisor::Supervisor;

use crate::cage::{CageError, CagePolicy};

/// The filter of a spawn about to be made: the child's part (moved into
/// the `pre_exec` closure: [`enter`]) and the host's ([`HostPlan::start`]).
pub fn prepare(policy: &CagePolicy) -> Result<Option<(ChildSide, HostPlan)>, CageError> {
    if !policy.filters_network() {
        return Ok(None);
    }
    let (child, host) = notify::prepare()?;
    Ok(Some((
        child,
        HostPlan {
            host,
            rules: NetRules::from_policy(&policy.net),
        },
    )))
}

/// In the spawn child, right after the Landlock layer and before the
/// descriptors are placed: load the filter and hand its listener to the
/// host (async-signal-safe; see [`notify::enter`]). Nothing when the
/// network is not filtered.
pub fn enter(child: Option<&ChildSide>) -> std::io::Result<()> {
    match child {
        Some(c) => notify::enter(c),
        None => Ok(()),
    }
}

/// The host's part of a filtered spawn, until bwrap started.
#[derive(Debug)]
pub struct HostPlan {
    host: HostSide,
    rules: NetRules,
}

impl HostPlan {
    /// After bwrap started: receive the listener the child sent and start
    /// the supervisor of `plugin`'s cage. `None` (said in the host's log)
    /// when that fails: the filter then has no listener, and every
    /// `connect` of the cage fails (`ENOSYS`), none is let through.
    pub fn start(self, plugin: &str) -> Option<Supervisor> {
        let timeout = crate::time::NET_CONNECT_TIMEOUT;
        let started = self
            .host
            .receive()
            .and_then(|listener| Supervisor::start(listener, self.rules, plugin, timeout));
        started
            .inspect_err(|e| {
                tracing::warn!(plugin, error = %e, "no network filter: the cage's connects fail");
            })
            .ok()
    }
}
