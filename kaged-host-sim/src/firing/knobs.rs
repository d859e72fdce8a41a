//! Operator knob writes (plugin-host.md § Plugin knob schema): the UI
//! writes a knob's value to the `config.<field>` it binds to; the daemon
//! validates the value against the knob's type bounds and the new project
//! config against `config_schema`, sends the plugin the merged config with
//! `config.update`, and audits `plugin.knob_write`.
//!
//! The write changes the declaring agent's project-side config (the
//! `AgentSpec.plugins.<name>.config` the UI would edit); system config is
//! never touched. A plugin that rejects the `config.update` leaves the
//! previous config in force.

use kaged_plugin_sdk::manifest::Knob;
use kaged_plugin_sdk::protocol::methods;
use serde_json::{json, Value};

use super::{plugins, AgentHost};
use crate::agents::config::merge_config;
use crate::observe::audit::AuditEvent;
use crate::plugin::session::call::CallError;
use crate::validate::KnobType;

/// Why a knob write was refused.
#[derive(Debug, thiserror::Error)]
pub enum KnobWriteError {
    /// No such agent.
    #[error("unknown agent path {0:?}")]
    UnknownAgent(String),
    /// The plugin is not active on the agent.
    #[error("no plugin {plugin:?} is active on {agent_path}")]
    NotDeclared {
        /// The agent path.
        agent_path: String,
        /// The plugin key or name asked for.
        plugin: String,
    },
    /// The manifest declares no such knob.
    #[error("{plugin} declares no knob {knob:?}")]
    UnknownKnob {
        /// The plugin.
        plugin: String,
        /// The knob asked for.
        knob: String,
    },
    /// The value breaks the knob's type bounds.
    #[error("knob {knob}: {reason}")]
    OutOfBounds {
        /// The knob.
        knob: String,
        /// What is wrong with the value.
        reason: String,
    },
    /// The new project config does not validate against `config_schema`.
    #[error("knob {knob}: the project config would not validate: {}", errors.join("; "))]
    InvalidConfig {
        /// The knob.
        knob: String,
        /// The schema errors.
        errors: Vec<String>,
    },
    /// The plugin refused the `config.update` (or did not answer).
    #[error("knob {knob}: the plugin refused the new config")]
    Rejected {
        /// The knob.
        knob: String,
        /// The plugin's answer.
        #[source]
        source: CallError,
    },
}

/// A knob write that reached the plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct KnobWrite {
    /// The config field written (`recall_budget` of `config.recall_budget`).
    pub field: String,
    /// The request id audited with `plugin.knob_write`.
    pub request_id: String,
    /// The merged config sent with `config.update`.
    pub config: serde_json::Map<String, Value>,
}

/// Check `value` against a knob's type bounds (the manifest is valid, so
/// the knob's own fields are well-formed).
pub fn check_knob_value(knob: &Knob, value: &Value) -> Result<(), String> {
    let f = |k: &str| knob.fields.get(k);
    let num = |k: &str| f(k).and_then(Value::as_f64);
    let bounds = |v: f64| -> Result<(), String> {
        match (num("min"), num("max")) {
            (Some(lo), _) if v < lo => Err(format!("{v} is below min {lo}")),
            (_, Some(hi)) if v > hi => Err(format!("{v} is above max {hi}")),
            _ => Ok(()),
        }
    };
    let max_len = |s: &str| match f("max_length").and_then(Value::as_u64) {
        Some(n) if s.chars().count() as u64 > n => Err(format!("longer than max_length {n}")),
        _ => Ok(()),
    };
    let Some(kind) = KnobType::parse(&knob.kind) else {
        return Err(format!("unknown knob type {:?}", knob.kind));
    };
    match (kind, value) {
        (KnobType::Range, Value::Number(n)) => bounds(n.as_f64().unwrap_or(f64::NAN)),
        (KnobType::IntRange, Value::Number(n)) if n.is_i64() || n.is_u64() => {
            bounds(n.as_f64().unwrap_or(f64::NAN))
        }
        (KnobType::IntRange, _) => Err(format!("{value} is not an integer")),
        (KnobType::Enum, Value::String(s)) => {
            let values = f("values")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if values.iter().any(|v| v.as_str() == Some(s)) {
                Ok(())
            } else {
                Err(format!("{s:?} is not one of {}", Value::Array(values)))
            }
        }
        (KnobType::Boolean, Value::Bool(_)) => Ok(()),
        (KnobType::Text, Value::String(s)) => {
            max_len(s)?;
            match f("pattern").and_then(Value::as_str) {
                Some(p) => match regex::Regex::new(p) {
                    Ok(re) if re.is_match(s) => Ok(()),
                    Ok(_) => Err(format!("{s:?} does not match pattern {p:?}")),
                    Err(e) => Err(format!("the knob's pattern does not compile: {e}")),
                },
                None => Ok(()),
            }
        }
        (KnobType::Multiline, Value::String(s)) => max_len(s),
        (KnobType::ModelAlias, Value::String(_) | Value::Null) => Ok(()),
        (KnobType::Path, Value::String(s)) => {
            let prefixes: Vec<&str> = f("prefixes")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if prefixes.iter().any(|p| s.starts_with(p)) {
                Ok(())
            } else {
                Err(format!("{s:?} does not start with one of {prefixes:?}"))
            }
        }
        (kind, v) => Err(format!("{v} is not a valid {} value", kind.as_str())),
    }
}

impl AgentHost {
    /// Write `value` to `knob` of `plugin` (declaration key or manifest
    /// name) on `agent_path`; see the module docs.
    pub async fn write_knob(
        &mut self,
        agent_path: &str,
        plugin: &str,
        knob: &str,
        value: Value,
    ) -> Result<KnobWrite, KnobWriteError> {
        let request_id = format!(
            "req_knob_{}",
            self.request_seq
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        );
        let agent = self
            .resolution
            .agents
            .iter_mut()
            .find(|a| a.path == agent_path)
            .ok_or_else(|| KnobWriteError::UnknownAgent(agent_path.to_string()))?;
        let not_declared = || KnobWriteError::NotDeclared {
            agent_path: agent_path.to_string(),
            plugin: plugin.to_string(),
        };
        let active = agent
            .plugins
            .iter_mut()
            .find(|p| p.key == plugin || p.name == plugin)
            .ok_or_else(not_declared)?;
        let running = plugins::find(&self.plugins, active).ok_or_else(not_declared)?;
        let manifest = running.session.manifest();
        let unknown = || KnobWriteError::UnknownKnob {
            plugin: active.name.clone(),
            knob: knob.to_string(),
        };
        let decl = manifest
            .knobs
            .iter()
            .find(|(k, _)| k == knob)
            .map(|(_, d)| d)
            .ok_or_else(unknown)?;
        let field = decl
            .binds_to
            .as_deref()
            .and_then(|b| b.strip_prefix("config."))
            .ok_or_else(unknown)?
            .to_string();
        check_knob_value(decl, &value).map_err(|reason| KnobWriteError::OutOfBounds {
            knob: knob.to_string(),
            reason,
        })?;
        let mut project = active.project_config.clone();
        project.insert(field.clone(), value.clone());
        let merged = match merge_config(manifest, &project, Some(&active.system_config)) {
            Ok(m) => m,
            Err(failures) => {
                for f in &failures {
                    self.host.audit().emit(
                        AuditEvent::ConfigValidationFailed,
                        &active.name,
                        json!({"side": f.side.as_str(), "errors": f.errors, "agent_path": agent_path,
                               "key": active.key, "knob": knob}),
                    );
                }
                return Err(KnobWriteError::InvalidConfig {
                    knob: knob.to_string(),
                    errors: failures.into_iter().flat_map(|f| f.errors).collect(),
                });
            }
        };
        let mut gate = running.gate.lock().await;
        let params = Value::Object(merged.merged.clone());
        if let Err(source) = running
            .session
            .call(methods::CONFIG_UPDATE, Some(params), None)
            .await
        {
            return Err(KnobWriteError::Rejected {
                knob: knob.to_string(),
                source,
            });
        }
        *gate = merged.merged.clone();
        drop(gate);
        active.project_config = merged.project;
        active.config = merged.merged.clone();
        self.host.audit().emit(
            AuditEvent::KnobWrite,
            &active.name,
            json!({"knob": knob, "agent_path": agent_path, "request_id": request_id, "field": field, "value": value}),
        );
        Ok(KnobWrite {
            field,
            request_id,
            config: merged.merged,
        })
    }
}
