//! The names of the system methods and notifications, as constants.

/// Handshake request (daemon to plugin).
pub const INITIALIZE: &str = "initialize";
/// Handshake-complete notification (daemon to plugin).
pub const INITIALIZED: &str = "initialized";
/// Graceful shutdown (a notification; the SDK also accepts a request).
pub const SHUTDOWN: &str = "shutdown";
/// Health check.
pub const PING: &str = "ping";
/// New config for the plugin.
pub const CONFIG_UPDATE: &str = "config.update";
/// A project using the plugin was loaded.
pub const PROJECTS_ACTIVATED: &str = "projects.activated";
/// A project using the plugin was unloaded.
pub const PROJECTS_DEACTIVATED: &str = "projects.deactivated";
/// Host to plugin: notifications were dropped (ADDENDUM §8).
pub const SYSTEM_RATE_LIMITED: &str = "system.rate_limited";

/// The system methods every plugin answers (daemon to plugin).
pub const SYSTEM_METHODS: [&str; 7] = [
    INITIALIZE,
    INITIALIZED,
    SHUTDOWN,
    PING,
    CONFIG_UPDATE,
    PROJECTS_ACTIVATED,
    PROJECTS_DEACTIVATED,
];
