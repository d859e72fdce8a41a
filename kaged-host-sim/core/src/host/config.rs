//! [`HostConfig`]: how the simulated daemon behaves, built with chainable
//! `with_*` setters on [`HostConfig::default`].
//!
//! ```
//! use std::sync::Arc;
//! use kaged_host_core::{AuditLog, CageMode, DefaultHandler, HostConfig, TimeScale};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let audit = AuditLog::memory();
//! let config = HostConfig::default()
//!     .with_time_scale(TimeScale::new(0.5)?)
//!     .with_audit(audit.clone())
//!     .with_cage(CageMode::Off)
//!     .with_storage(Arc::new(DefaultHandler))
//!     .with_projects(vec!["proj".to_string()]);
//! assert!(config.storage_available);
//! assert_eq!(config.projects, ["proj"]);
//! // A variant of a configuration in hand: clone it, set what differs.
//! let quiet = config.clone().with_log_level("warn");
//! assert_eq!(quiet.log_level, "warn");
//! # Ok(()) }
//! ```
//!
//! The fields stay public (reading them is how the host and tests inspect
//! a configuration, and struct literals written against earlier versions
//! keep compiling), but the setters are the one way this workspace builds
//! a configuration.

use crate::plugin::RequestIds;
use std::path::PathBuf;
use std::sync::Arc;

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::{InitializeParams, API_VERSION};

use crate::cage::CageMode;
use crate::observe::audit::AuditLog;
use crate::observe::transcript::Transcript;
use crate::plugin::FirstConfig;
use crate::requests::handler::{DefaultHandler, PluginRequestHandler};
use crate::time::{TimeScale, Timeouts};

/// How the simulated daemon behaves.
#[derive(Clone)]
pub struct HostConfig {
    /// Multiplies every timeout and interval (ADDENDUM §10).
    pub time_scale: TimeScale,
    /// Where audit events go.
    pub audit: AuditLog,
    /// Where the wire transcript goes.
    pub transcript: Transcript,
    /// `initialize.daemon_version`.
    pub daemon_version: String,
    /// `initialize.storage_available`.
    pub storage_available: bool,
    /// `initialize.projects`.
    pub projects: Vec<String>,
    /// Answers plugin-to-host requests (storage).
    pub handler: Arc<dyn PluginRequestHandler>,
    /// `KAGED_LOG_LEVEL` given to plugins.
    pub log_level: String,
    /// Sets effective timeouts after scaling, for tests that wait out one
    /// timeout while every other wait keeps its budget (a short request
    /// timeout, a full `initialize` budget for a slow machine). `None`
    /// (the default): each is the spec value × `time_scale`.
    pub adjust_timeouts: Option<fn(Timeouts) -> Timeouts>,
    /// Caged or not (ADDENDUM §13; default `auto`).
    pub cage: CageMode,
    /// The daemon's `--no-sandbox` was given: recorded
    /// (`plugin.no_sandbox_ignored`), and changes nothing for plugins.
    pub no_sandbox: bool,
    /// The operator's config root: `config:/` grants resolve under it and
    /// plugins get it as `KAGED_CONFIG_ROOT`. `None`: a plugin with a
    /// `config:/` grant does not start (its cage does not compile), unless
    /// the cage is `off`.
    pub config_root: Option<PathBuf>,
    /// The project root of `project:/` grants.
    pub project_root: Option<PathBuf>,
    /// What [`HostSim::launch`](crate::HostSim::launch) sends with
    /// `config.update` right after `initialized` (default: the defaults of
    /// both config schemas, as the daemon does when the operator set
    /// nothing).
    pub first_config: FirstConfig,
    /// The run's request-id sequence. Every handle launched by a host with
    /// this config (or a clone of it: the daemon's supervisors, its
    /// restarts) draws its `req_<plugin>_<n>` ids from it, so an id never
    /// repeats within a run, across restarts too (ADDENDUM §16).
    pub request_ids: RequestIds,
}

impl Default for HostConfig {
    fn default() -> HostConfig {
        HostConfig {
            time_scale: TimeScale::FULL,
            audit: AuditLog::discard(),
            transcript: Transcript::discard(),
            daemon_version: env!("CARGO_PKG_VERSION").to_string(),
            storage_available: false,
            projects: Vec::new(),
            handler: Arc::new(DefaultHandler),
            log_level: "info".to_string(),
            adjust_timeouts: None,
            cage: CageMode::Auto,
            no_sandbox: false,
            config_root: None,
            project_root: None,
            first_config: FirstConfig::Defaults,
            request_ids: RequestIds::default(),
        }
    }
}

impl std::fmt::Debug for HostConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostConfig")
            .field("time_scale", &self.time_scale)
            .field("daemon_version", &self.daemon_version)
            .field("storage_available", &self.storage_available)
            .field("projects", &self.projects)
            .field("adjust_timeouts", &self.adjust_timeouts.is_some())
            .field("cage", &self.cage)
            .finish_non_exhaustive()
    }
}

impl HostConfig {
    /// Sets [`HostConfig::time_scale`].
    pub fn with_time_scale(mut self, time_scale: TimeScale) -> HostConfig {
        self.time_scale = time_scale;
        self
    }

    /// Sets [`HostConfig::audit`].
    pub fn with_audit(mut self, audit: AuditLog) -> HostConfig {
        self.audit = audit;
        self
    }

    /// Sets [`HostConfig::transcript`].
    pub fn with_transcript(mut self, transcript: Transcript) -> HostConfig {
        self.transcript = transcript;
        self
    }

    /// Sets [`HostConfig::daemon_version`].
    pub fn with_daemon_version(mut self, version: impl Into<String>) -> HostConfig {
        self.daemon_version = version.into();
        self
    }

    /// Sets [`HostConfig::storage_available`].
    pub fn with_storage_available(mut self, available: bool) -> HostConfig {
        self.storage_available = available;
        self
    }

    /// Sets [`HostConfig::handler`] (storage stays as it is: see
    /// [`HostConfig::with_storage`]).
    pub fn with_handler(mut self, handler: Arc<dyn PluginRequestHandler>) -> HostConfig {
        self.handler = handler;
        self
    }

    /// Storage available, answered by `handler`: sets
    /// [`HostConfig::storage_available`] and [`HostConfig::handler`].
    pub fn with_storage(self, handler: Arc<dyn PluginRequestHandler>) -> HostConfig {
        self.with_storage_available(true).with_handler(handler)
    }

    /// Sets [`HostConfig::projects`].
    pub fn with_projects(mut self, projects: Vec<String>) -> HostConfig {
        self.projects = projects;
        self
    }

    /// Sets [`HostConfig::log_level`].
    pub fn with_log_level(mut self, level: impl Into<String>) -> HostConfig {
        self.log_level = level.into();
        self
    }

    /// Sets [`HostConfig::adjust_timeouts`] (`None`: the scaled spec
    /// values).
    pub fn with_adjust_timeouts(mut self, adjust: Option<fn(Timeouts) -> Timeouts>) -> HostConfig {
        self.adjust_timeouts = adjust;
        self
    }

    /// Sets [`HostConfig::cage`].
    pub fn with_cage(mut self, cage: CageMode) -> HostConfig {
        self.cage = cage;
        self
    }

    /// Sets [`HostConfig::no_sandbox`].
    pub fn with_no_sandbox(mut self, no_sandbox: bool) -> HostConfig {
        self.no_sandbox = no_sandbox;
        self
    }

    /// Sets [`HostConfig::config_root`] (a path, or an `Option`).
    pub fn with_config_root(mut self, root: impl Into<Option<PathBuf>>) -> HostConfig {
        self.config_root = root.into();
        self
    }

    /// Sets [`HostConfig::project_root`] (a path, or an `Option`).
    pub fn with_project_root(mut self, root: impl Into<Option<PathBuf>>) -> HostConfig {
        self.project_root = root.into();
        self
    }

    /// Sets [`HostConfig::first_config`].
    pub fn with_first_config(mut self, first: FirstConfig) -> HostConfig {
        self.first_config = first;
        self
    }

    /// The `initialize` params a host with this configuration sends the
    /// plugin of `manifest`: the one place they are built.
    pub fn init_params(&self, manifest: &Manifest) -> InitializeParams {
        InitializeParams {
            daemon_version: self.daemon_version.clone(),
            api_version: API_VERSION,
            plugin_name: manifest.name.clone(),
            storage_available: self.storage_available,
            projects: self.projects.clone(),
        }
    }
}
