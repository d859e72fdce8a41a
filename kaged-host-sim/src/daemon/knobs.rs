//! The knob schema with current values, and daemon-level knob writes
//! (plugin-host.md § Plugin knob schema).

use kaged_plugin_protocol::methods;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::error::DaemonError;
use super::running::Daemon;
use crate::agents::config::merge_config;
use crate::firing::knobs::{bound_knob, check_knob_value};
use crate::observe::audit::AuditEvent;

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
    /// The knob schema of `name` with the values in force.
    pub async fn knobs(&self, name: &str) -> Result<Vec<KnobView>, DaemonError> {
        let managed = self.managed(name)?;
        let manifest = managed
            .manifest
            .as_ref()
            .ok_or_else(|| DaemonError::NoManifest {
                name: name.to_string(),
            })?;
        let project = managed.config.lock().await.clone();
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

    /// Write `value` to `knob` of `name`: checked against the knob's bounds
    /// and `config_schema` (nothing is sent when either refuses), sent with
    /// `config.update`, audited `plugin.knob_write`. Returns the merged
    /// config in force.
    pub async fn write_knob(
        &self,
        name: &str,
        knob: &str,
        value: Value,
    ) -> Result<Map<String, Value>, DaemonError> {
        let managed = self.managed(name)?;
        let session = self.session(name)?;
        let manifest = session.manifest();
        let unknown = || DaemonError::UnknownKnob {
            plugin: name.to_string(),
            knob: knob.to_string(),
        };
        let (decl, field) = bound_knob(manifest, knob).ok_or_else(unknown)?;
        check_knob_value(decl, &value).map_err(|reason| DaemonError::OutOfBounds {
            knob: knob.to_string(),
            reason,
        })?;
        // Held across the call: two writes never interleave.
        let mut config = managed.config.lock().await;
        let mut project = config.clone();
        project.insert(field.to_string(), value.clone());
        let merged = merge_config(manifest, &project, None).map_err(|failures| {
            DaemonError::InvalidConfig {
                knob: knob.to_string(),
                errors: failures.into_iter().flat_map(|f| f.errors).collect(),
            }
        })?;
        let params = Value::Object(merged.merged.clone());
        if let Err(source) = session
            .call(methods::CONFIG_UPDATE, Some(params), None)
            .await
        {
            return Err(DaemonError::Rejected {
                knob: knob.to_string(),
                source,
            });
        }
        *config = project;
        // A restarted process gets the same config right after its handshake.
        managed.sup.set_config(Some(merged.merged.clone()));
        drop(config);
        let request_id = session.next_request_id();
        self.host().audit().emit(
            AuditEvent::KnobWrite,
            name,
            json!({"knob": knob, "field": field, "value": value, "agent_path": null, "request_id": request_id}),
        );
        Ok(merged.merged)
    }
}
