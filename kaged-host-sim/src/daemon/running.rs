//! The running daemon: one supervisor per enabled plugin.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::methods;
use tokio::sync::broadcast::Receiver;
use tokio::task::JoinHandle;

use super::consent_gate::ConsentGate;
use super::error::DaemonError;
use super::history::History;
use super::project::DaemonProject;
use kaged_host_core::audit::{AuditEvent, AuditRecord};
use kaged_host_core::time::clock::Clock;
use kaged_host_core::HostSim;
use kaged_host_core::PluginHandle;
use kaged_host_core::{PluginState, StartGate, Supervisor};
use kaged_host_engine::agents::config::merge_config;

use super::managed::Managed;
use super::pending::PendingInstalls;
use super::status::{status_of, PluginStatus};

/// How a [`Daemon`] runs its plugins, beyond the host's config.
#[derive(Debug, Default)]
pub struct DaemonOptions {
    /// The clock of the supervisors' restart policy.
    pub clock: Clock,
    /// A project file: agent contexts for `?agent=PATH`.
    pub project: Option<PathBuf>,
    /// The plugin store the plugins come from: consent is checked before
    /// every start ([`ConsentGate`]). `None` (a `--plugins` directory):
    /// nothing was consented, nothing is checked.
    pub store: Option<PathBuf>,
    /// The project's consent requests while it is pending (`project` is
    /// then `None`): served by the API ([`PendingInstalls`]).
    pub pending: Option<Arc<PendingInstalls>>,
}

/// Every enabled plugin under its own supervisor; see the module docs.
#[derive(Debug)]
pub struct Daemon {
    host: HostSim,
    pub(super) plugins: Vec<Managed>,
    pub(super) project: Option<DaemonProject>,
    pending: Option<Arc<PendingInstalls>>,
    history: Arc<History>,
    /// The audit subscription feeding `history`, taken by the recorder
    /// task [`Daemon::start_all`] starts.
    events: std::sync::Mutex<Option<Receiver<AuditRecord>>>,
    recorder: std::sync::Mutex<Option<JoinHandle<()>>>,
}

/// What a daemon is assembled with beyond its plugins.
struct Parts {
    clock: Clock,
    project: Option<DaemonProject>,
    gate: Option<Arc<dyn StartGate>>,
    pending: Option<Arc<PendingInstalls>>,
}

impl Daemon {
    /// A daemon for the plugins in `dirs`, launched by `host`; nothing
    /// runs until [`Daemon::start_all`].
    pub fn new(host: HostSim, dirs: &[PathBuf]) -> Arc<Daemon> {
        let events = host.audit().subscribe();
        let manifests = read_manifests(dirs);
        let parts = Parts {
            clock: Clock::Real,
            project: None,
            gate: None,
            pending: None,
        };
        Daemon::assemble(host, dirs, manifests, events, parts)
    }

    /// [`Daemon::new`] with `options`: a project (loaded and resolved
    /// against the plugins' manifests; its id is listed in every
    /// `initialize`), a clock.
    pub fn with_options(
        host: HostSim,
        dirs: &[PathBuf],
        options: DaemonOptions,
    ) -> Result<Arc<Daemon>, DaemonError> {
        let events = host.audit().subscribe();
        let manifests = read_manifests(dirs);
        let gate = match &options.store {
            None => None,
            Some(root) => {
                let c = host.config();
                let gate = ConsentGate::new(root, c.config_root.clone(), c.project_root.clone())
                    .map_err(|source| DaemonError::Store {
                        root: root.clone(),
                        source,
                    })?;
                Some(Arc::new(gate) as Arc<dyn StartGate>)
            }
        };
        let (host, project) = match &options.project {
            None => (host, None),
            Some(file) => {
                let project = DaemonProject::load(file, manifests.iter().flatten(), host.audit())?;
                let host = HostSim::new(
                    host.config()
                        .clone()
                        .with_projects(vec![project.id().to_string()]),
                );
                (host, Some(project))
            }
        };
        let parts = Parts {
            clock: options.clock,
            project,
            gate,
            pending: options.pending,
        };
        Ok(Daemon::assemble(host, dirs, manifests, events, parts))
    }

    fn assemble(
        host: HostSim,
        dirs: &[PathBuf],
        manifests: Vec<Option<Manifest>>,
        events: Receiver<AuditRecord>,
        parts: Parts,
    ) -> Arc<Daemon> {
        let Parts {
            clock,
            project,
            gate,
            pending,
        } = parts;
        let refusals = super::overlap::refusals(host.config(), dirs, &manifests);
        let supervisor = |dir: &PathBuf, manifest: Option<&Manifest>| {
            let sup = Supervisor::with_clock(host.clone(), dir, clock.clone());
            if let Some(gate) = &gate {
                sup.set_start_gate(gate.clone());
            }
            // A plugin the project uses hears of it at every start.
            if let (Some(p), Some(m)) = (&project, manifest) {
                if let Some(config) = p.activation_config(&m.name) {
                    sup.set_project(Some((p.id().to_string(), config)));
                }
            }
            sup
        };
        let plugins = dirs
            .iter()
            .zip(manifests)
            .zip(refusals)
            .map(|((dir, manifest), refused)| Managed {
                sup: with_initial_config(
                    supervisor(dir, manifest.as_ref()),
                    manifest.as_ref(),
                    host.audit(),
                ),
                version: manifest
                    .as_ref()
                    .map(|m| m.version.clone())
                    .unwrap_or_default(),
                manifest,
                config: tokio::sync::Mutex::new(Map::new()),
                in_force: tokio::sync::Mutex::new(None),
                refused,
            })
            .collect();
        Arc::new(Daemon {
            host,
            plugins,
            project,
            pending,
            history: Arc::default(),
            events: std::sync::Mutex::new(Some(events)),
            recorder: std::sync::Mutex::new(None),
        })
    }

    /// The project loaded with [`DaemonOptions::project`].
    pub fn project(&self) -> Option<&DaemonProject> {
        self.project.as_ref()
    }

    /// The pending project's consent requests ([`DaemonOptions::pending`]).
    pub fn pending(&self) -> Option<&Arc<PendingInstalls>> {
        self.pending.as_ref()
    }

    /// The last lifecycle records of `name`, oldest first (at most
    /// [`HISTORY_LEN`](super::history::HISTORY_LEN)).
    pub fn history(&self, name: &str) -> Result<Vec<Value>, DaemonError> {
        let m = self.managed(name)?;
        Ok(self.history.of(m.sup.name()))
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

    /// The loaded project and `plugin` as active on its `agent`.
    pub(super) fn agent_plugin(
        &self,
        agent: &str,
        plugin: &str,
    ) -> Result<(&DaemonProject, &kaged_host_engine::agents::ActivePlugin), DaemonError> {
        let project = self
            .project
            .as_ref()
            .ok_or_else(|| DaemonError::NoProject(agent.to_string()))?;
        Ok((project, project.active(agent, plugin)?))
    }

    /// [`Daemon::managed`], refused when the plugin may not start at all.
    fn startable(&self, name: &str) -> Result<&Managed, DaemonError> {
        let m = self.managed(name)?;
        match &m.refused {
            Some(why) => Err(DaemonError::NestedGrant {
                name: name.to_string(),
                why: why.clone(),
            }),
            None => Ok(m),
        }
    }

    pub(super) fn managed(&self, name: &str) -> Result<&Managed, DaemonError> {
        self.plugins
            .iter()
            .find(|m| m.sup.name() == name)
            .ok_or_else(|| DaemonError::UnknownPlugin(name.to_string()))
    }

    /// The running process of `name`.
    pub(super) fn running(&self, name: &str) -> Result<Arc<PluginHandle>, DaemonError> {
        let sup = &self.managed(name)?.sup;
        sup.current().ok_or_else(|| DaemonError::NotRunning {
            name: name.to_string(),
            state: sup.state().to_string(),
        })
    }

    /// Start every plugin; returns at once (each comes up, or fails, on its
    /// own: one failing never blocks the others).
    pub async fn start_all(&self) {
        let events = self.events.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(events) = events {
            let task = History::spawn_recorder(self.history.clone(), events);
            *self.recorder.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
        }
        for m in &self.plugins {
            if let Some(why) = &m.refused {
                tracing::error!(plugin = %m.sup.name(), %why, "not started");
                for event in [AuditEvent::Failed, AuditEvent::Disabled] {
                    self.host.audit().emit(
                        event,
                        m.sup.name(),
                        json!({"reason": "nested_grant", "detail": why}),
                    );
                }
                continue;
            }
            if let Err(e) = m.sup.start().await {
                tracing::warn!(plugin = %m.sup.name(), error = %e, "not started");
            }
        }
    }

    /// Graceful shutdown of every plugin, concurrently; returns when every
    /// process is gone. The project, if one is loaded, is unloaded first:
    /// each running plugin it uses gets `projects.deactivated {project}`
    /// (as the agent host does).
    pub async fn shutdown(&self) {
        // The plugins told of the project at their start
        // (`Supervisor::set_project`, in `assemble`).
        let told = self.plugins.iter().filter_map(|m| {
            let project = m.sup.project()?;
            let plugin = m.sup.current()?;
            let params = json!({"project": project});
            Some(async move {
                if let Err(e) = plugin
                    .call(methods::PROJECTS_DEACTIVATED, Some(params), None)
                    .await
                {
                    tracing::warn!(plugin = %plugin.name(), error = %e, "projects.deactivated was not accepted");
                }
            })
        });
        futures_util::future::join_all(told).await;
        futures_util::future::join_all(self.plugins.iter().map(|m| m.sup.stop())).await;
        let recorder = self
            .recorder
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(task) = recorder {
            task.abort();
        }
    }

    /// Every plugin's status.
    pub fn status(&self) -> Vec<PluginStatus> {
        self.plugins.iter().map(status_of).collect()
    }

    /// The status of `name`.
    pub fn status_of(&self, name: &str) -> Result<PluginStatus, DaemonError> {
        self.managed(name).map(status_of)
    }

    /// Operator enable (from `disabled`, `failed` or `stopped`).
    pub async fn enable(&self, name: &str) -> Result<PluginStatus, DaemonError> {
        let m = self.startable(name)?;
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
        let m = self.startable(name)?;
        m.sup.stop().await;
        if m.sup.state() == PluginState::Stopped {
            m.sup.start().await?;
        } else {
            m.sup.enable().await?;
        }
        Ok(status_of(m))
    }
}

/// Merging (plugin-host.md § Project config vs system config): at every
/// initialization the daemon sends the merged config with `config.update`
/// (ADDENDUM §12: right after `initialized`). A plugin that declares no
/// config schema has no config: the supervisor sends it `{}` (ADDENDUM
/// §15: always sent). A merged config that breaks a schema (a required
/// system field the operator has not set) is audited
/// `plugin.config_validation_failed` per side, and the schemas' defaults
/// are sent instead.
fn with_initial_config(
    sup: Supervisor,
    manifest: Option<&Manifest>,
    audit: &kaged_host_core::audit::AuditLog,
) -> Supervisor {
    let config = manifest
        .filter(|m| m.config_schema.is_some() || m.system_config_schema.is_some())
        .and_then(|m| match merge_config(m, &Map::new(), None) {
            Ok(merged) => Some(merged.merged),
            Err(failures) => {
                for f in failures {
                    audit.emit(
                        kaged_host_core::audit::AuditEvent::ConfigValidationFailed,
                        &m.name,
                        serde_json::json!({"side": f.side.as_str(), "errors": f.errors}),
                    );
                }
                None
            }
        });
    sup.set_config(config);
    sup
}

fn read_manifests(dirs: &[PathBuf]) -> Vec<Option<Manifest>> {
    dirs.iter()
        .map(|dir| kaged_host_core::validate::validate_dir(dir).manifest)
        .collect()
}
