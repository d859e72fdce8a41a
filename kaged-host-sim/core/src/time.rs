//! Time as a parameter: every timeout and interval of the host comes from
//! here, multiplied by one [`TimeScale`] (ADDENDUM §10).
//!
//! ```
//! use std::time::Duration;
//! use kaged_host_core::time::{TimeScale, Timeouts};
//! let scale = TimeScale::new(0.05).unwrap();
//! let t = Timeouts::defaults(scale);
//! assert_eq!(t.initialize, Duration::from_millis(500));
//! assert!(TimeScale::new(0.0).is_err() && TimeScale::new(1.5).is_err());
//! ```

pub mod clock;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use kaged_plugin_protocol::manifest::{
    Manifest, DEFAULT_HEALTH_INTERVAL_SEC, DEFAULT_HOOK_TIMEOUT_SEC, DEFAULT_SHUTDOWN_TIMEOUT_SEC,
};

/// Seconds the host waits for the `initialize` answer (Handshake failure modes).
pub const INITIALIZE_TIMEOUT_SEC: u64 = 10;
/// Seconds the host waits for a method answer (Failure modes: "30s default").
pub const REQUEST_TIMEOUT_SEC: u64 = 30;
/// Seconds between SIGTERM and SIGKILL (Graceful shutdown, ADDENDUM §2).
pub const SIGTERM_GRACE_SEC: u64 = 2;
/// Seconds a `ping` may take (Health checks).
pub const PING_TIMEOUT_SEC: u64 = 5;
/// Length of the notification rate-limit window in seconds (ADDENDUM §8);
/// real seconds: never scaled (ADDENDUM §10).
pub const NOTIFICATION_WINDOW_SEC: u64 = 1;
/// Notifications accepted per window (ADDENDUM §8). A count: never scaled.
pub const NOTIFICATION_LIMIT: u32 = 100;
/// The window, in seconds, the stderr rates are counted in
/// (`bounds::STDERR_LINES_PER_SEC`, `STDERR_BYTES_PER_SEC`), and the least
/// time between two `<N stderr lines dropped …>` lines of one plugin. A
/// rate's second: real seconds, never scaled (ADDENDUM §10).
pub const STDERR_WINDOW_SEC: u64 = 1;
/// Seconds one storage statement may run before it is interrupted
/// (`-32603`, "statement interrupted"): the budget of a `query`, and the
/// cap of every other budget below. A statement's cost is the machine's,
/// not a protocol wait: never scaled (a scaled budget would interrupt a
/// plugin's ordinary statements in a fast test run).
pub const STORAGE_STATEMENT_BUDGET: Duration = Duration::from_secs(5);
/// How long one write statement (`kaged.storage.exec`) may hold the
/// database's one write lock, which every plugin shares, before it is
/// interrupted and rolled back. Rewriting a whole 64 MiB quota's worth of
/// rows takes well under a second (an `UPDATE` of every row of a 39 MiB
/// table, 0.3 s on a 2-core machine), so 2 s leaves room for a loaded
/// machine while a plugin writing back to back keeps the lock at most 2 s
/// at a time. Not scaled (see [`STORAGE_STATEMENT_BUDGET`]).
pub const STORAGE_WRITE_BUDGET: Duration = Duration::from_secs(2);
/// Writes wait for the write lock in one first-come, first-served queue,
/// one place per plugin (a plugin's own calls run one at a time); a write
/// waits at most this many write budgets for its turn, then answers
/// `-32005` ("storage is busy, retry"). With `K` plugins writing at once a
/// write starts within `(K - 1) ×` [`STORAGE_WRITE_BUDGET`], so up to this
/// many other plugins writing back to back never make it busy. A count.
pub const STORAGE_WRITE_WAIT_TURNS: u32 = 5;
/// How long a storage connection waits for the file's write lock held by
/// another process (the command line's `storage` commands on the same
/// file), SQLite's busy timeout; past it `-32005`. Not scaled.
pub const STORAGE_BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the host tries to make a connect a filtered cage's `net:`
/// grant allows (the name's lookup and the TCP handshake, every address
/// tried), before the plugin's `connect` fails with `ETIMEDOUT`. A remote
/// host's latency is the network's, not the protocol's: not scaled.
pub const NET_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a project-load install's `git clone` of a package's source may
/// take before it is stopped and the source reported unreachable. The
/// network's time, not the protocol's: not scaled.
pub const GIT_FETCH_TIMEOUT: Duration = Duration::from_secs(120);
/// Default wait of a session script's `wait` step, in seconds (scaled).
pub const SCRIPT_WAIT_SEC: u64 = 5;
/// The least time the host waits to see a SIGKILLed plugin exit. A safety
/// bound (SIGKILL cannot be ignored), not a spec timeout: not scaled.
pub const KILL_CONFIRM_MIN: Duration = Duration::from_secs(1);
/// How often a killed process group is polled until it is gone. Not scaled.
pub const REAP_POLL: Duration = Duration::from_millis(5);

/// Between two reads of a plugin's state over a daemon's API, waiting for
/// a restart it was asked for to settle (`plugin install` after an upgrade).
pub const API_STATE_POLL: Duration = Duration::from_millis(50);
/// Seconds a client of the daemon's HTTP API has to send a request's whole
/// head: from connecting, or on a kept-alive connection from the first
/// byte of its next request (scaled). A kit decision: the spec states
/// none; an unauthenticated client must not hold a connection for nothing.
pub const API_HEADER_READ_TIMEOUT_SEC: u64 = 10;
/// Seconds a kept-alive connection to the daemon's HTTP API may wait, with
/// no request in flight, for its next request (scaled). A kit decision.
pub const API_IDLE_TIMEOUT_SEC: u64 = 30;
/// The wait before the API accepts again after an accept failed (out of
/// descriptors: `EMFILE`, `ENFILE`). A poll, not a spec timeout: not scaled.
pub const API_ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// Seconds before the first restart after a failure (Restart policy); the
/// delay doubles with each consecutive failure: 1 s, 2 s, 4 s ... (scaled).
pub const RESTART_BACKOFF_INITIAL_SEC: u64 = 1;
/// The cap on the restart delay, in seconds (Restart policy: "capped at 60s").
pub const RESTART_BACKOFF_MAX_SEC: u64 = 60;
/// Consecutive failures within [`FAILURE_WINDOW_SEC`] that mark a plugin
/// failed (Restart policy). A count: never scaled.
pub const MAX_CONSECUTIVE_FAILURES: u32 = 5;
/// The window, in seconds, in which [`MAX_CONSECUTIVE_FAILURES`] failures
/// mark a plugin failed (Restart policy: "within 10 minutes").
pub const FAILURE_WINDOW_SEC: u64 = 600;

/// A factor `F`, `0 < F <= 1`, applied to every spec timeout and interval.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct TimeScale(f64);

/// A time scale outside `(0, 1]`, or not a number.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid time scale {value:?}: must be a number with 0 < F <= 1")]
pub struct TimeScaleError {
    /// The rejected input, as written.
    pub value: String,
}

impl TimeScale {
    /// The real time scale (`F = 1`).
    pub const FULL: TimeScale = TimeScale(1.0);

    /// Validate `f` (`0 < f <= 1`, finite).
    pub fn new(f: f64) -> Result<TimeScale, TimeScaleError> {
        if f.is_finite() && f > 0.0 && f <= 1.0 {
            Ok(TimeScale(f))
        } else {
            Err(TimeScaleError {
                value: f.to_string(),
            })
        }
    }

    /// The factor.
    pub fn factor(self) -> f64 {
        self.0
    }

    /// `d * F`.
    pub fn apply(self, d: Duration) -> Duration {
        d.mul_f64(self.0)
    }

    /// `secs * F`.
    pub fn secs(self, secs: u64) -> Duration {
        self.apply(Duration::from_secs(secs))
    }
}

impl Default for TimeScale {
    fn default() -> TimeScale {
        TimeScale::FULL
    }
}

impl fmt::Display for TimeScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for TimeScale {
    type Err = TimeScaleError;

    fn from_str(s: &str) -> Result<TimeScale, TimeScaleError> {
        let f: f64 = s.trim().parse().map_err(|_| TimeScaleError {
            value: s.to_string(),
        })?;
        TimeScale::new(f).map_err(|_| TimeScaleError {
            value: s.to_string(),
        })
    }
}

/// Every effective (scaled) timeout and interval for one plugin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timeouts {
    /// The scale these values were computed with.
    pub scale: TimeScale,
    /// Wait for the `initialize` answer (10 s).
    pub initialize: Duration,
    /// Wait for a method answer (30 s).
    pub request: Duration,
    /// Wait for the answer to the first `config.update`, sent right after
    /// the handshake (the request timeout, 30 s). It comes while the
    /// plugin's runtime is still starting, so
    /// [`Timeouts::with_spec_startup_and_exit`] keeps it at its spec budget
    /// with `initialize`.
    pub first_config: Duration,
    /// Wait for a hook answer (manifest `hook_timeout_sec`, default 10 s).
    pub hook: Duration,
    /// Wait for exit after `shutdown` (manifest `shutdown_timeout_sec`, default 5 s).
    pub shutdown: Duration,
    /// Wait between SIGTERM and SIGKILL (2 s).
    pub sigterm_grace: Duration,
    /// Wait for a `ping` answer (5 s).
    pub ping: Duration,
    /// Between health pings (manifest `health_interval_sec`, default 30 s).
    pub health_interval: Duration,
    /// The notification rate-limit window: one real second at any scale
    /// (a rate is not an interval, ADDENDUM §10).
    pub notification_window: Duration,
    /// Notifications accepted per window (100, not scaled).
    pub notification_limit: u32,
    /// The window of the stderr rate limit: one real second at any scale
    /// ([`STDERR_WINDOW_SEC`]).
    pub stderr_window: Duration,
}

impl Timeouts {
    /// The spec defaults (no manifest), scaled.
    pub fn defaults(scale: TimeScale) -> Timeouts {
        Timeouts::build(
            scale,
            DEFAULT_HOOK_TIMEOUT_SEC,
            DEFAULT_SHUTDOWN_TIMEOUT_SEC,
            DEFAULT_HEALTH_INTERVAL_SEC,
        )
    }

    /// The values for `manifest` (its `hook_timeout_sec`,
    /// `shutdown_timeout_sec` and `health_interval_sec`), scaled.
    pub fn for_manifest(manifest: &Manifest, scale: TimeScale) -> Timeouts {
        Timeouts::build(
            scale,
            manifest.hook_timeout_sec(),
            manifest.shutdown_timeout_sec(),
            manifest.health_interval_sec(),
        )
    }

    fn build(scale: TimeScale, hook: u64, shutdown: u64, health: u64) -> Timeouts {
        Timeouts {
            scale,
            initialize: scale.secs(INITIALIZE_TIMEOUT_SEC),
            request: scale.secs(REQUEST_TIMEOUT_SEC),
            first_config: scale.secs(REQUEST_TIMEOUT_SEC),
            hook: scale.secs(hook),
            shutdown: scale.secs(shutdown),
            sigterm_grace: scale.secs(SIGTERM_GRACE_SEC),
            ping: scale.secs(PING_TIMEOUT_SEC),
            health_interval: scale.secs(health),
            notification_window: Duration::from_secs(NOTIFICATION_WINDOW_SEC),
            notification_limit: NOTIFICATION_LIMIT,
            stderr_window: Duration::from_secs(STDERR_WINDOW_SEC),
        }
    }

    /// These timeouts with the waits that measure the machine more than the
    /// plugin, process start (`initialize` and the first `config.update`)
    /// and exit (`shutdown` and the grace after SIGTERM), back at their
    /// spec budgets (unscaled); every
    /// other value keeps its scale. A plugin that ends on SIGTERM ends at
    /// once whatever the grace; a scaled grace made "stopped by SIGTERM" or
    /// "killed" depend on how busy the machine was.
    /// For [`HostConfig::adjust_timeouts`](crate::HostConfig::adjust_timeouts):
    /// tests that wait out a scaled timeout on a busy machine, where an
    /// interpreter may take seconds to start or exit.
    ///
    /// ```
    /// use std::time::Duration;
    /// use kaged_host_core::time::{TimeScale, Timeouts};
    /// let t = Timeouts::defaults(TimeScale::new(0.05).unwrap()).with_spec_startup_and_exit();
    /// assert_eq!(t.initialize, Duration::from_secs(10));
    /// assert_eq!(t.first_config, Duration::from_secs(30));
    /// assert_eq!(t.shutdown, Duration::from_secs(5));
    /// assert_eq!(t.sigterm_grace, Duration::from_secs(2));
    /// assert_eq!(t.request, Duration::from_millis(1500));
    /// ```
    pub fn with_spec_startup_and_exit(self) -> Timeouts {
        let unscaled = |d: Duration| d.div_f64(self.scale.factor());
        Timeouts {
            initialize: unscaled(self.initialize),
            first_config: unscaled(self.first_config),
            shutdown: unscaled(self.shutdown),
            sigterm_grace: unscaled(self.sigterm_grace),
            ..self
        }
    }

    /// One line per value, for reports ("Reports state the effective values").
    pub fn describe(&self) -> String {
        format!(
            "time scale {}: initialize {:?}, request {:?}, first config.update {:?}, hook {:?}, shutdown {:?}, sigterm grace {:?}, ping {:?}, health interval {:?}, notification window {:?} ({} per window), stderr window {:?}",
            self.scale,
            self.initialize,
            self.request,
            self.first_config,
            self.hook,
            self.shutdown,
            self.sigterm_grace,
            self.ping,
            self.health_interval,
            self.notification_window,
            self.notification_limit,
            self.stderr_window
        )
    }
}

/// The supervisor's restart policy (`plugin-host.md` Restart policy), scaled.
///
/// ```
/// use std::time::Duration;
/// use kaged_host_core::time::{RestartPolicy, TimeScale};
/// let p = RestartPolicy::new(TimeScale::new(0.5).unwrap());
/// let delays: Vec<Duration> = (1..=8).map(|n| p.backoff(n)).collect();
/// let secs = |s: f64| Duration::from_secs_f64(s);
/// assert_eq!(delays, [secs(0.5), secs(1.0), secs(2.0), secs(4.0), secs(8.0), secs(16.0), secs(30.0), secs(30.0)]);
/// assert_eq!(p.window, Duration::from_secs(300));
/// assert_eq!(p.max_failures, 5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RestartPolicy {
    /// The scale these values were computed with.
    pub scale: TimeScale,
    /// The failure window (10 minutes, scaled).
    pub window: Duration,
    /// Consecutive failures within the window that mark the plugin failed (5).
    pub max_failures: u32,
}

impl RestartPolicy {
    /// The spec's policy at `scale`.
    pub fn new(scale: TimeScale) -> RestartPolicy {
        RestartPolicy {
            scale,
            window: scale.secs(FAILURE_WINDOW_SEC),
            max_failures: MAX_CONSECUTIVE_FAILURES,
        }
    }

    /// The delay before the restart that follows the `failures`-th
    /// consecutive failure (1-based; 0 is taken as 1), scaled.
    pub fn backoff(&self, failures: u32) -> Duration {
        self.scale.secs(restart_backoff_sec(failures))
    }
}

/// The unscaled restart delay after `failures` consecutive failures
/// (1-based; 0 is taken as 1): 1, 2, 4, 8, 16, 32, then 60 seconds.
pub fn restart_backoff_sec(failures: u32) -> u64 {
    let doublings = failures.saturating_sub(1).min(16);
    RESTART_BACKOFF_INITIAL_SEC
        .saturating_mul(1u64 << doublings)
        .min(RESTART_BACKOFF_MAX_SEC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_is_validated() {
        for bad in ["0", "-1", "1.01", "nan", "inf", "x", ""] {
            assert!(bad.parse::<TimeScale>().is_err(), "{bad}");
        }
        assert_eq!("0.5".parse::<TimeScale>().unwrap().factor(), 0.5);
        assert_eq!("1".parse::<TimeScale>().unwrap(), TimeScale::FULL);
    }

    #[test]
    fn manifest_values_are_scaled() {
        let m = Manifest::from_yaml_str(
            "name: a\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [x]\ncapabilities: []\nshutdown_timeout_sec: 4\nhook_timeout_sec: 20\nhealth_interval_sec: 10\n",
        )
        .unwrap();
        let t = Timeouts::for_manifest(&m, TimeScale::new(0.5).unwrap());
        assert_eq!(t.shutdown, Duration::from_secs(2));
        assert_eq!(t.hook, Duration::from_secs(10));
        assert_eq!(t.health_interval, Duration::from_secs(5));
        assert_eq!(t.request, Duration::from_secs(15));
        assert_eq!(t.sigterm_grace, Duration::from_secs(1));
        assert_eq!(t.notification_limit, 100);
    }
}
