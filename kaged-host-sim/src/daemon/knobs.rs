//! The knob schema with current values, and daemon-level knob writes
//! (plugin-host.md § Plugin knob schema).

use serde::Serialize;
use serde_json::{Map, Value};

use super::error::DaemonError;
use super::in_force::{held, send_config};
use super::running::Daemon;
use kaged_host_engine::agents::config::merge_config;
use kaged_host_engine::{KnobRoots, KnobWriteRequest};

/// One knob as the UI renders it: the manifest's declaration (type, label,
/// type fields) and the value in force.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KnobView {
    /// The knob's key.
    pub name: String,
    /// The knob type (`range`, `enum` ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// Its label.
    pub label: Option<String>,
    /// Its help text.
    pub description: Option<String>,
    /// The `config.<field>` it binds to.
    pub binds_to: Option<String>,
    /// The type fields (`min`, `max`, `step`, `values`, `default` ...).
    pub fields: Map<String, Value>,
    /// The value in force: the last written, else the config's default,
    /// else the knob's default.
    pub value: Value,
}

impl Daemon {
    /// The knob schema of `name` with the values in force at daemon level,
    /// or for `agent` (which needs a project).
    pub async fn knobs(
        &self,
        name: &str,
        agent: Option<&str>,
    ) -> Result<Vec<KnobView>, DaemonError> {
        let managed = self.managed(name)?;
        let manifest = managed.manifest()?;
        let project = match agent {
            None => managed.config.lock().await.clone(),
            Some(agent) => {
                let (project, _) = self.agent_plugin(agent, managed.sup.name())?;
                project.project_config(agent, managed.sup.name()).await
            }
        };
        // Defaults applied; a config that does not validate shows the
        // written values only.
        let current = merge_config(manifest, &project, None).map_or(project, |m| m.project);
        Ok(manifest
            .knobs
            .iter()
            .map(|(key, knob)| {
                let field = knob
                    .binds_to
                    .as_deref()
                    .and_then(|b| b.strip_prefix("config."));
                let value = field
                    .and_then(|f| current.get(f))
                    .or_else(|| knob.fields.get("default"))
                    .cloned()
                    .unwrap_or(Value::Null);
                KnobView {
                    name: key.clone(),
                    kind: knob.kind.clone(),
                    label: knob.label.clone(),
                    description: knob.description.clone(),
                    binds_to: knob.binds_to.clone(),
                    fields: knob.fields.clone(),
                    value,
                }
            })
            .collect())
    }

    /// Write `value` to `knob` of `name`, at daemon level or for `agent`:
    /// the engine's [`KnobWriteRequest`] checks it against the knob's
    /// bounds and `config_schema` (nothing is sent when either refuses),
    /// sends it with `config.update` and audits `plugin.knob_write`.
    /// Returns the merged config in force.
    pub async fn write_knob(
        &self,
        name: &str,
        knob: &str,
        value: Value,
        agent: Option<&str>,
    ) -> Result<Map<String, Value>, DaemonError> {
        let managed = self.managed(name)?;
        let plugin = managed.sup.name();
        let manifest = managed.manifest()?;
        // Held across the send: two daemon-level writes never interleave.
        let mut daemon_config = managed.config.lock().await;
        let (project, active) = match agent {
            None => (daemon_config.clone(), None),
            Some(agent) => {
                let (p, active) = self.agent_plugin(agent, plugin)?;
                (p.project_config(agent, plugin).await, Some(active))
            }
        };
        let process = self.running(name)?;
        let request = KnobWriteRequest {
            manifest,
            plugin: name,
            knob,
            value,
            project,
            system: active.map(|a| &a.system_config),
            agent_path: agent,
            key: active.map(|a| a.key.as_str()),
            roots: KnobRoots {
                config: self.host().config().config_root.as_deref(),
                // `project:/` lands in the loaded project's directory.
                project: self
                    .project
                    .as_ref()
                    .and_then(|p| p.file().parent())
                    .or(self.host().config().project_root.as_deref()),
            },
        };
        let written = request
            .write(self.host().audit(), |merged| async {
                let mut in_force = managed.in_force.lock().await;
                let held = held(managed, &process, &mut in_force);
                send_config(&process, held, merged).await?;
                Ok(process.next_request_id())
            })
            .await?;
        match (agent, &self.project) {
            (Some(agent), Some(p)) => {
                p.set_project_config(agent, plugin, &written.field, written.project)
                    .await?
            }
            _ => {
                *daemon_config = written.project;
                // A new process gets it right after its handshake.
                managed.sup.set_config(Some(written.merged.clone()));
            }
        }
        drop(daemon_config);
        Ok(written.merged)
    }
}
