//! The running daemon: one supervisor per enabled plugin.

use std::path::PathBuf;
use std::sync::Arc;

use kaged_plugin_protocol::PluginCallContext;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::error::DaemonError;
use crate::host::HostSim;
use crate::plugin::session::PluginSession;
use crate::supervisor::{PluginState, Supervisor};

/// One supervised plugin and its daemon-side config.
#[derive(Debug)]
pub(super) struct Managed {
    pub(super) sup: Supervisor,
    pub(super) version: String,
    /// The project-side config written by knob writes (sent with
    /// `config.update`); empty until the first write.
    pub(super) config: tokio::sync::Mutex<Map<String, Value>>,
}

/// Every enabled plugin under its own supervisor; see the module docs.
#[derive(Debug)]
pub struct Daemon {
    host: HostSim,
    pub(super) plugins: Vec<Managed>,
}

/// One row of `GET /api/v1/plugins`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PluginStatus {
    /// The manifest name.
    pub name: String,
    /// The manifest version (empty when the manifest cannot be read).
    pub version: String,
    /// The supervisor state (`running`, `crashed`, `failed` ...).
    pub state: String,
    /// The running process's pid.
    pub pid: Option<u32>,
    /// Processes started after the first one (restarts and re-enables).
    pub restarts: u64,
    /// How the last process ended: `{"code", "signal"}`.
    pub last_exit: Option<Value>,
    /// Whether the running process is caged; `None` when none runs.
    pub caged: Option<bool>,
}

impl Daemon {
    /// A daemon for the plugins in `dirs`, launched by `host`; nothing
    /// runs until [`Daemon::start_all`].
    pub fn new(host: HostSim, dirs: &[PathBuf]) -> Arc<Daemon> {
        let plugins = dirs
            .iter()
            .map(|dir| {
                let version = crate::validate::validate_dir(dir)
                    .manifest
                    .map(|m| m.version)
                    .unwrap_or_default();
                Managed {
                    sup: Supervisor::new(host.clone(), dir),
                    version,
                    config: tokio::sync::Mutex::new(Map::new()),
                }
            })
            .collect();
        Arc::new(Daemon { host, plugins })
    }

    /// The host the plugins run in (its audit log, its config).
    pub fn host(&self) -> &HostSim {
        &self.host
    }

    /// The plugins' names, in start order.
    pub fn names(&self) -> Vec<&str> {
        self.plugins.iter().map(|m| m.sup.name()).collect()
    }

    /// The supervisor of `name`.
    pub fn supervisor(&self, name: &str) -> Option<&Supervisor> {
        self.managed(name).ok().map(|m| &m.sup)
    }

    pub(super) fn managed(&self, name: &str) -> Result<&Managed, DaemonError> {
        self.plugins
            .iter()
            .find(|m| m.sup.name() == name)
            .ok_or_else(|| DaemonError::UnknownPlugin(name.to_string()))
    }

    /// The running session of `name`.
    pub(super) fn session(&self, name: &str) -> Result<Arc<PluginSession>, DaemonError> {
        let sup = &self.managed(name)?.sup;
        sup.current().ok_or_else(|| DaemonError::NotRunning {
            name: name.to_string(),
            state: sup.state().to_string(),
        })
    }

    /// Start every plugin; returns at once (each comes up, or fails, on its
    /// own: one failing never blocks the others).
    pub async fn start_all(&self) {
        for m in &self.plugins {
            if let Err(e) = m.sup.start().await {
                tracing::warn!(plugin = %m.sup.name(), error = %e, "not started");
            }
        }
    }

    /// Graceful shutdown of every plugin, concurrently; returns when every
    /// process is gone.
    pub async fn shutdown(&self) {
        futures_util::future::join_all(self.plugins.iter().map(|m| m.sup.stop())).await;
    }

    /// Every plugin's status.
    pub fn status(&self) -> Vec<PluginStatus> {
        self.plugins.iter().map(status_of).collect()
    }

    /// The status of `name`.
    pub fn status_of(&self, name: &str) -> Result<PluginStatus, DaemonError> {
        self.managed(name).map(status_of)
    }

    /// Call `method` on `name` with a daemon context (a tool or hook needs
    /// an agent context: `agent`, which needs a project).
    pub async fn call(
        &self,
        name: &str,
        method: &str,
        params: Option<Value>,
        agent: Option<&str>,
    ) -> Result<Value, DaemonError> {
        if let Some(agent) = agent {
            return Err(DaemonError::NoProject(agent.to_string()));
        }
        let session = self.session(name)?;
        let ctx: Option<PluginCallContext> = None;
        session
            .call(method, params, ctx)
            .await
            .map_err(DaemonError::Call)
    }

    /// Operator enable (from `disabled`, `failed` or `stopped`).
    pub async fn enable(&self, name: &str) -> Result<PluginStatus, DaemonError> {
        let m = self.managed(name)?;
        m.sup.enable().await?;
        Ok(status_of(m))
    }

    /// Operator disable: graceful stop, `plugin.disabled {reason: "operator"}`.
    pub async fn disable(&self, name: &str) -> Result<PluginStatus, DaemonError> {
        let m = self.managed(name)?;
        m.sup.disable("operator").await;
        Ok(status_of(m))
    }

    /// Operator restart: graceful stop, then start afresh (a `failed` or
    /// `disabled` plugin is enabled).
    pub async fn restart(&self, name: &str) -> Result<PluginStatus, DaemonError> {
        let m = self.managed(name)?;
        m.sup.stop().await;
        if m.sup.state() == PluginState::Stopped {
            m.sup.start().await?;
        } else {
            m.sup.enable().await?;
        }
        Ok(status_of(m))
    }
}

fn status_of(m: &Managed) -> PluginStatus {
    let session = m.sup.current();
    PluginStatus {
        name: m.sup.name().to_string(),
        version: m.version.clone(),
        state: m.sup.state().to_string(),
        pid: session.as_ref().and_then(|s| s.pid()),
        restarts: m.sup.spawn_attempts().saturating_sub(1),
        last_exit: m
            .sup
            .last_exit()
            .map(|x| json!({"code": x.code, "signal": x.signal})),
        caged: session.as_ref().map(|s| s.caged()),
    }
}
