//! The library entry point: [`HostSim`] launches plugins from directories
//! (validate, spawn, handshake) or connects to an in-process peer.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use kaged_host_core::{HostConfig, HostSim, TimeScale};
//! let host = HostSim::new(HostConfig { time_scale: TimeScale::new(0.1)?, ..HostConfig::default() });
//! let session = host.launch("plugins/echo".as_ref()).await?;
//! let out = session.call("echo.say", Some(serde_json::json!({"text": "hi"})), None).await?;
//! println!("{out}");
//! session.shutdown().await;
//! # Ok(()) }
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::{InitializeParams, API_VERSION};
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::cage::{CageMode, CageStatus};
use crate::observe::audit::{AuditEvent, AuditLog};
use crate::observe::transcript::Transcript;
use crate::plugin::connection::{Connection, ConnectionConfig};
use crate::plugin::handle::PluginHandle;
use crate::plugin::handshake::HandshakeError;
use crate::plugin::process::{become_subreaper, ExitInfo, Lifecycle};
use crate::plugin::spawn::{spawn_plugin, SpawnError, SpawnOptions};
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

/// Why a plugin could not be started.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The manifest has errors (the plugin is disabled for this run).
    #[error("invalid manifest in {dir}:\n{report}")]
    InvalidManifest {
        /// The plugin directory.
        dir: PathBuf,
        /// The validation report, one problem per line.
        report: String,
    },
    /// The process could not be started.
    #[error("cannot start plugin {name:?}")]
    Spawn {
        /// The plugin.
        name: String,
        /// The cause.
        #[source]
        source: SpawnError,
    },
    /// The process exited before answering `initialize`.
    #[error("plugin {name:?} exited at once ({}); last stderr: {}",
        exit.map_or_else(|| "how is unknown".to_string(), |e| e.to_string()), stderr.join(" | "))]
    ExitedAtOnce {
        /// The plugin.
        name: String,
        /// How it exited, when known.
        exit: Option<ExitInfo>,
        /// Its last stderr lines.
        stderr: Vec<String>,
    },
    /// The handshake failed and the plugin was killed.
    #[error("handshake with plugin {name:?} failed")]
    Handshake {
        /// The plugin.
        name: String,
        /// The failure row.
        #[source]
        source: HandshakeError,
    },
}

/// The simulated daemon.
#[derive(Debug, Clone, Default)]
pub struct HostSim {
    config: HostConfig,
}

impl HostSim {
    /// A host with `config`.
    pub fn new(config: HostConfig) -> HostSim {
        HostSim { config }
    }

    /// The configuration.
    pub fn config(&self) -> &HostConfig {
        &self.config
    }

    /// The audit log.
    pub fn audit(&self) -> &AuditLog {
        &self.config.audit
    }

    /// The effective timeouts for `manifest`: scaled, then
    /// [`HostConfig::adjust_timeouts`].
    pub fn timeouts(&self, manifest: &Manifest) -> Timeouts {
        let scaled = Timeouts::for_manifest(manifest, self.config.time_scale);
        self.config
            .adjust_timeouts
            .map_or(scaled, |adjust| adjust(scaled))
    }

    fn init_params(&self, m: &Manifest) -> InitializeParams {
        InitializeParams {
            daemon_version: self.config.daemon_version.clone(),
            api_version: API_VERSION,
            plugin_name: m.name.clone(),
            storage_available: self.config.storage_available,
            projects: self.config.projects.clone(),
        }
    }

    fn conn_config(&self, m: Arc<Manifest>) -> ConnectionConfig {
        ConnectionConfig {
            timeouts: self.timeouts(&m),
            manifest: m,
            audit: self.config.audit.clone(),
            transcript: self.config.transcript.clone(),
            handler: self.config.handler.clone(),
            storage_available: self.config.storage_available,
        }
    }

    /// Validate `dir` (refusing any error), spawn the plugin and run the
    /// handshake. On failure nothing is left running.
    pub async fn launch(&self, dir: &Path) -> Result<PluginHandle, LaunchError> {
        let session = self.launch_lenient(dir).await?;
        finish_handshake(session).await
    }

    /// Validate and spawn, but do not run the handshake: the caller drives
    /// the plugin through [`PluginHandle::raw`] or
    /// [`PluginHandle::handshake`] (for conformance tests that send calls
    /// before `initialized` or malformed input).
    pub async fn launch_lenient(&self, dir: &Path) -> Result<PluginHandle, LaunchError> {
        let report = crate::validate::validate_dir(dir);
        let name = report.manifest.as_ref().map_or_else(
            || {
                dir.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            },
            |m| m.name.clone(),
        );
        let manifest = match report.manifest.clone() {
            Some(m) if !report.has_errors() => Arc::new(m),
            _ => {
                let rendered = report.render_human();
                self.config.audit.emit(
                    AuditEvent::Disabled,
                    &name,
                    json!({"reason": "invalid manifest", "problems": rendered}),
                );
                return Err(LaunchError::InvalidManifest {
                    dir: dir.to_path_buf(),
                    report: rendered,
                });
            }
        };
        become_subreaper();
        let options = SpawnOptions {
            log_level: self.config.log_level.clone(),
            cage: self.config.cage,
            config_root: self.config.config_root.clone(),
            project_root: self.config.project_root.clone(),
            cage_start: self.timeouts(&manifest).initialize,
        };
        let spawned = spawn_plugin(&manifest, dir, &options)
            .await
            .map_err(|source| {
                self.config.audit.emit(
                    AuditEvent::Failed,
                    &name,
                    json!({"reason": "spawn failed", "detail": source.to_string()}),
                );
                LaunchError::Spawn {
                    name: name.clone(),
                    source,
                }
            })?;
        // Spawn order step 5: the process is recorded when it starts, before
        // anything it says is read, so a failed handshake follows this event.
        audit_spawned(
            &self.config.audit,
            &manifest,
            Some(spawned.pid),
            Some(&spawned.cage),
        );
        if self.config.no_sandbox {
            self.config.audit.emit(
                AuditEvent::NoSandboxIgnored,
                &name,
                json!({"cage": spawned.cage.cage, "cage_id": spawned.cage.cage_id}),
            );
        }
        let cfg = self.conn_config(manifest.clone());
        let timeouts = cfg.timeouts;
        let conn = Connection::start(
            cfg,
            spawned.stdout,
            spawned.stdin,
            Some(Box::new(spawned.stderr)),
        );
        let life = Lifecycle::for_child(
            conn,
            spawned.child,
            spawned.pid,
            timeouts,
            spawned.cage,
            spawned.runtime,
        );
        let params = self.init_params(&manifest);
        Ok(PluginHandle::new(
            manifest,
            &spawned.dir,
            life,
            self.config.audit.clone(),
            params,
        ))
    }

    /// Connect to an in-process peer over `reader` (its stdout) and `writer`
    /// (its stdin), e.g. the two halves of a `tokio::io::duplex`, and run the
    /// handshake. "Killing" it closes the pipe.
    pub async fn connect<R, W>(
        &self,
        manifest: Manifest,
        plugin_dir: &Path,
        reader: R,
        writer: W,
    ) -> Result<PluginHandle, LaunchError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        finish_handshake(self.connect_lenient(manifest, plugin_dir, reader, writer)).await
    }

    /// [`HostSim::connect`] without the handshake. Must be called within a
    /// Tokio runtime (it spawns the connection's tasks).
    pub fn connect_lenient<R, W>(
        &self,
        manifest: Manifest,
        plugin_dir: &Path,
        reader: R,
        writer: W,
    ) -> PluginHandle
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let manifest = Arc::new(manifest);
        audit_spawned(&self.config.audit, &manifest, None, None);
        let cfg = self.conn_config(manifest.clone());
        let timeouts = cfg.timeouts;
        let conn = Connection::start(cfg, reader, writer, None);
        let life = Lifecycle::in_process(conn, timeouts);
        let params = self.init_params(&manifest);
        PluginHandle::new(
            manifest,
            plugin_dir,
            life,
            self.config.audit.clone(),
            params,
        )
    }
}

/// `plugin.spawned {version, pid, cage_id, cage}`: the manifest's
/// version, the process group id (`null` in-process), the cage's id (`null`
/// uncaged) and `cage`: `bwrap`, `unavailable` or `off` (`null` in-process).
fn audit_spawned(
    audit: &AuditLog,
    manifest: &Manifest,
    pid: Option<u32>,
    cage: Option<&CageStatus>,
) {
    audit.emit(
        AuditEvent::Spawned,
        &manifest.name,
        json!({
            "version": manifest.version,
            "pid": pid,
            "cage_id": cage.and_then(|c| c.cage_id.clone()),
            "cage": cage.map(|c| c.cage),
        }),
    );
}

async fn finish_handshake(session: PluginHandle) -> Result<PluginHandle, LaunchError> {
    match session.handshake().await {
        Ok(_) => Ok(session),
        Err(HandshakeError::Exited) => Err(LaunchError::ExitedAtOnce {
            name: session.name().to_string(),
            exit: session.exit_info(),
            stderr: session.stderr_tail(),
        }),
        Err(source) => Err(LaunchError::Handshake {
            name: session.name().to_string(),
            source,
        }),
    }
}
