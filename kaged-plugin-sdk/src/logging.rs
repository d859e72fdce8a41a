//! Logging: `tracing` events as JSON lines on stderr, never stdout.
//!
//! The level comes from `KAGED_LOG_LEVEL` (set by the daemon: `trace`,
//! `debug`, `info`, `warn`, `error`; default `info`). The runtime calls
//! [`init`] before serving; plugins log with the ordinary `tracing` macros,
//! re-exported as [`crate::log`].

use tracing_subscriber::EnvFilter;

/// The variable the daemon sets to the configured log level.
pub const LOG_LEVEL_VAR: &str = "KAGED_LOG_LEVEL";

/// Install the stderr JSON subscriber. Harmless when a subscriber is
/// already installed (the existing one is kept).
pub fn init() {
    let level = std::env::var(LOG_LEVEL_VAR).unwrap_or_else(|_| "info".into());
    let filter = EnvFilter::try_new(level.trim().to_ascii_lowercase())
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_current_span(false)
        .try_init();
}
