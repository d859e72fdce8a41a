//! The library entry point: [`HostSim`] launches plugins from directories
//! (validate, spawn, handshake) or connects to an in-process peer.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use kaged_host_core::{HostConfig, HostSim, TimeScale};
//! let host = HostSim::new(HostConfig::default().with_time_scale(TimeScale::new(0.1)?));
//! let plugin = host.launch("plugins/echo".as_ref()).await?;
//! let out = plugin.call("echo.say", Some(serde_json::json!({"text": "hi"})), None).await?;
//! println!("{out}");
//! plugin.shutdown().await;
//! # Ok(()) }
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::InitializeParams;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::cage::{CageMode, CageStatus};
use crate::observe::audit::{AuditEvent, AuditLog};
use crate::plugin::connection::{Connection, ConnectionConfig};
use crate::plugin::handle::{FirstConfig, FirstConfigSent, PluginHandle};
use crate::plugin::handshake::HandshakeError;
use crate::plugin::process::{become_subreaper, ExitInfo, Lifecycle};
use crate::plugin::spawn::{host_resources_exhausted, spawn_plugin, SpawnError, SpawnOptions};
use crate::time::Timeouts;

mod config;

pub use config::HostConfig;

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
    /// The plugin did not survive the first `config.update` (it timed out
    /// and was killed, or the plugin exited): a refusal it answered is no
    /// failure (it runs on its defaults, as in the daemon).
    #[error("plugin {name:?} did not survive its first config.update: {why}")]
    FirstConfig {
        /// The plugin.
        name: String,
        /// What happened to the call.
        why: String,
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
    /// A host with `config`. With [`CageMode::Off`] every audit record it
    /// emits carries `"cage": "off"` (ADDENDUM §15), not only
    /// `plugin.spawned`.
    pub fn new(mut config: HostConfig) -> HostSim {
        if config.cage == CageMode::Off {
            config.audit = config.audit.tagged("cage", CageMode::Off.as_str());
        }
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

    /// The `initialize` params this host sends the plugin of `manifest`
    /// ([`HostConfig::init_params`]).
    pub fn init_params(&self, manifest: &Manifest) -> InitializeParams {
        self.config.init_params(manifest)
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

    /// Validate `dir` (refusing any error), spawn the plugin, run the
    /// handshake and send the first config ([`HostConfig::first_config`]).
    /// On failure nothing is left running.
    pub async fn launch(&self, dir: &Path) -> Result<PluginHandle, LaunchError> {
        self.launch_with(dir, &self.config.first_config).await
    }

    /// [`HostSim::launch`], sending `first` as the first config instead of
    /// [`HostConfig::first_config`] (the supervisor and the agent host send
    /// the operator's merged config).
    pub async fn launch_with(
        &self,
        dir: &Path,
        first: &FirstConfig,
    ) -> Result<PluginHandle, LaunchError> {
        let plugin = self.launch_lenient(dir).await?;
        finish_handshake(plugin, first).await
    }

    /// Validate and spawn, but do not run the handshake: the caller drives
    /// the plugin through [`PluginHandle::raw`] or
    /// [`PluginHandle::handshake`] (for conformance tests that send calls
    /// before `initialized` or malformed input).
    pub async fn launch_lenient(&self, dir: &Path) -> Result<PluginHandle, LaunchError> {
        let manifest_file = dir.join(kaged_plugin_protocol::manifest::MANIFEST_FILE);
        let report = match std::fs::read_to_string(&manifest_file) {
            // Out of descriptors or memory: the host's want, a start that
            // failed (retried by the supervisor), not an invalid manifest
            // (which would disable the plugin for the run).
            Err(source) if host_resources_exhausted(&source) => {
                let name = dir
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                let source = SpawnError::BadDir {
                    dir: dir.to_path_buf(),
                    source,
                };
                return Err(self.spawn_failed(name, source));
            }
            Ok(text) => crate::validate::validate_str(&text),
            Err(_) => crate::validate::validate_dir(dir),
        };
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
            .map_err(|source| self.spawn_failed(name.clone(), source))?;
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
        // A duplicate of stdout's read end, to see what waits in the pipe
        // (`PluginHandle::output_settled`); without one, what waits is not
        // seen and the reader's own counts decide.
        let stdout_pipe = {
            use std::os::fd::AsFd;
            spawned
                .stdout
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| tracing::debug!(plugin = %name, error = %e, "stdout not duplicated"))
                .ok()
        };
        let conn = Connection::start(
            cfg,
            spawned.stdout,
            spawned.stdin,
            Some(Box::new(spawned.stderr)),
            stdout_pipe,
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
            self.config.request_ids.clone(),
        ))
    }

    /// A start that failed before the plugin ran: audited
    /// `plugin.failed {reason: "spawn failed", detail}`.
    fn spawn_failed(&self, name: String, source: SpawnError) -> LaunchError {
        self.config.audit.emit(
            AuditEvent::Failed,
            &name,
            json!({"reason": "spawn failed", "detail": source.to_string()}),
        );
        LaunchError::Spawn { name, source }
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
        finish_handshake(
            self.connect_lenient(manifest, plugin_dir, reader, writer),
            &self.config.first_config,
        )
        .await
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
        let conn = Connection::start(cfg, reader, writer, None, None);
        let life = Lifecycle::in_process(conn, timeouts);
        let params = self.init_params(&manifest);
        PluginHandle::new(
            manifest,
            plugin_dir,
            life,
            self.config.audit.clone(),
            params,
            self.config.request_ids.clone(),
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

async fn finish_handshake(
    plugin: PluginHandle,
    first: &FirstConfig,
) -> Result<PluginHandle, LaunchError> {
    match plugin.handshake().await {
        Ok(_) => match plugin.send_first_config(first).await {
            Some(FirstConfigSent {
                refused: Some(why), ..
            }) if !plugin.is_running() => Err(LaunchError::FirstConfig {
                name: plugin.name().to_string(),
                why,
            }),
            _ => Ok(plugin),
        },
        Err(HandshakeError::Exited) => Err(LaunchError::ExitedAtOnce {
            name: plugin.name().to_string(),
            exit: plugin.exit_info(),
            stderr: plugin.stderr_tail(),
        }),
        Err(source) => Err(LaunchError::Handshake {
            name: plugin.name().to_string(),
            source,
        }),
    }
}
