//! A project loaded into the daemon (`up --project FILE`): the agent
//! contexts of `?agent=PATH` calls and knob reads and writes.
//!
//! The project is resolved against the daemon's plugins (their manifests,
//! registered under their names: `@scope/<name>` and `<name>` both answer).
//! Each agent declaring a plugin has its own project-side config (declared
//! in the project file, then as knob writes change it); a call or knob
//! write for an agent first puts that agent's config in force in the
//! plugin's process with `config.update` when the process holds another.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::PluginCallContext;
use serde_json::{Map, Value};

use super::error::DaemonError;
use kaged_host_core::audit::AuditLog;
use kaged_host_engine::agents::{persist, resolve, ActivePlugin, Catalogue, Project, Resolution};

/// The session id of agent calls without `?session=`.
pub const DEFAULT_API_SESSION: &str = "ses_api";

/// A resolved project; see the module docs.
#[derive(Debug)]
pub struct DaemonProject {
    file: PathBuf,
    id: String,
    resolution: Resolution,
    /// The project-side config of each (agent path, plugin name).
    configs: tokio::sync::Mutex<HashMap<(String, String), Map<String, Value>>>,
    seq: AtomicU64,
}

impl DaemonProject {
    /// Load `file` and resolve it against `manifests`; the resolution's
    /// events (tool registrations, warnings) go into `audit`, as do those
    /// of a failed resolution.
    pub fn load<'m>(
        file: &Path,
        manifests: impl IntoIterator<Item = &'m Manifest>,
        audit: &AuditLog,
    ) -> Result<DaemonProject, DaemonError> {
        let project = Project::load(file).map_err(|source| DaemonError::Project {
            file: file.to_path_buf(),
            source: Box::new(source),
        })?;
        let mut catalogue = Catalogue::new();
        for m in manifests {
            catalogue.insert_manifest(m.clone());
        }
        let resolution = resolve(&project, &catalogue).map_err(|e| {
            for ev in &e.events {
                ev.emit(audit);
            }
            DaemonError::Project {
                file: file.to_path_buf(),
                source: Box::new(e),
            }
        })?;
        resolution.emit_into(audit);
        let configs = resolution
            .agents
            .iter()
            .flat_map(|a| {
                a.plugins
                    .iter()
                    .map(|p| ((a.path.clone(), p.name.clone()), p.project_config.clone()))
            })
            .collect();
        Ok(DaemonProject {
            file: file.to_path_buf(),
            id: project.id.clone(),
            resolution,
            configs: tokio::sync::Mutex::new(configs),
            seq: AtomicU64::new(1),
        })
    }

    /// The project id (sent in `initialize` and every agent `_context`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The project file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The resolution (agents, their plugins and tools).
    pub fn resolution(&self) -> &Resolution {
        &self.resolution
    }

    /// The config `projects.activated` tells `plugin` (manifest name) about
    /// when the project uses it: its project-side config as declared on
    /// the primary agent, else on the first agent that declares it; `None`
    /// when no agent of the project declares it.
    pub fn activation_config(&self, plugin: &str) -> Option<Map<String, Value>> {
        let declared = |a: &kaged_host_engine::agents::AgentResolution| {
            a.plugins
                .iter()
                .find(|p| p.name == plugin)
                .map(|p| p.project_config.clone())
        };
        let agents = &self.resolution.agents;
        agents
            .iter()
            .filter(|a| a.path == "primary")
            .chain(agents.iter())
            .find_map(declared)
    }

    /// The plugin `plugin` (manifest name) as active on `agent`.
    pub(super) fn active(&self, agent: &str, plugin: &str) -> Result<&ActivePlugin, DaemonError> {
        let a = self
            .resolution
            .agent(agent)
            .ok_or_else(|| DaemonError::UnknownAgent {
                agent: agent.to_string(),
                known: self.resolution.agent_paths().join(", "),
            })?;
        a.plugins
            .iter()
            .find(|p| p.name == plugin)
            .ok_or_else(|| DaemonError::NotActive {
                agent: agent.to_string(),
                plugin: plugin.to_string(),
            })
    }

    /// The project-side config of `plugin` on `agent`.
    pub(super) async fn project_config(&self, agent: &str, plugin: &str) -> Map<String, Value> {
        let configs = self.configs.lock().await;
        configs
            .get(&(agent.to_string(), plugin.to_string()))
            .cloned()
            .unwrap_or_default()
    }

    /// Replace the project-side config of `plugin` on `agent` after a knob
    /// write of `field`, and write that field into the project file
    /// (plugin-host.md § Plugin knob schema: "Knob changes write to
    /// project.yaml's AgentSpec.plugins.<name>.config"; see
    /// [`kaged_host_engine::agents::persist`]). The file is replaced whole
    /// (a temporary file renamed over it), under the configs' lock.
    pub(super) async fn set_project_config(
        &self,
        agent: &str,
        plugin: &str,
        field: &str,
        config: Map<String, Value>,
    ) -> Result<(), DaemonError> {
        let mut configs = self.configs.lock().await;
        let value = config.get(field).cloned().unwrap_or(Value::Null);
        configs.insert((agent.to_string(), plugin.to_string()), config);
        let key = self.active(agent, plugin)?.key.clone();
        let file = self.file.display().to_string();
        let failed = |reason: String| {
            DaemonError::ProjectNotSaved(persist::PersistError {
                file: file.clone(),
                agent_path: agent.to_string(),
                key: key.clone(),
                field: field.to_string(),
                reason,
            })
        };
        let text = std::fs::read_to_string(&self.file)
            .map_err(|e| failed(format!("cannot read it: {e}")))?;
        let out = persist::set_config_field(&text, &file, agent, &key, field, &value)
            .map_err(DaemonError::ProjectNotSaved)?;
        let tmp = self.file.with_extension("yaml.kaged-tmp");
        std::fs::write(&tmp, out)
            .and_then(|()| std::fs::rename(&tmp, &self.file))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                failed(format!("cannot write it: {e}"))
            })
    }

    /// A full agent context: the request id of the API request it serves
    /// (`X-Request-Id`), else a fresh one of its own.
    pub(super) fn context(&self, agent: &str, session: Option<&str>) -> PluginCallContext {
        let request_id = kaged_host_core::audit::current_request_id()
            .unwrap_or_else(|| format!("req_agent_{}", self.seq.fetch_add(1, Ordering::SeqCst)));
        PluginCallContext::agent(
            self.id.clone(),
            agent,
            session.unwrap_or(DEFAULT_API_SESSION),
            request_id,
        )
    }
}
