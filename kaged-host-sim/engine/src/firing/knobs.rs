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

use std::future::Future;
use std::path::Path;

use kaged_plugin_protocol::manifest::{Knob, Manifest};
use kaged_plugin_protocol::methods;
use serde_json::{json, Map, Value};

use super::{plugins, AgentHost};
use crate::agents::config::merge_config;
use kaged_host_core::audit::{AuditEvent, AuditLog};
use kaged_host_core::validate::{KnobBounds, KnobType, KnobValueError};
use kaged_host_core::CallError;

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

/// The knob `knob` of `manifest` and the config field it binds to (its
/// `binds_to` less `config.`); `None` when the manifest declares no such
/// knob or it binds to no config field. Shared by the project knob write
/// and the daemon's.
pub fn bound_knob<'m>(manifest: &'m Manifest, knob: &str) -> Option<(&'m Knob, &'m str)> {
    let decl = manifest
        .knobs
        .iter()
        .find(|(k, _)| k == knob)
        .map(|(_, d)| d)?;
    let field = decl.binds_to.as_deref()?.strip_prefix("config.")?;
    Some((decl, field))
}

/// Check `value` against a knob's type bounds (the manifest is valid, so
/// the knob's own fields are well-formed), with the validator's check
/// ([`KnobBounds`]); the reason is worded for the operator.
pub fn check_knob_value(knob: &Knob, value: &Value) -> Result<(), String> {
    let f = |k: &str| knob.fields.get(k);
    let strings = |k: &str| -> Vec<&str> {
        f(k).and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let Some(kind) = KnobType::parse(&knob.kind) else {
        return Err(format!("unknown knob type {:?}", knob.kind));
    };
    let pattern = f("pattern")
        .and_then(Value::as_str)
        .filter(|_| kind == KnobType::Text)
        .map(|p| (p, regex::Regex::new(p)));
    let mut bounds = KnobBounds::default();
    match kind {
        KnobType::Range | KnobType::IntRange => {
            bounds.min = f("min").and_then(Value::as_f64);
            bounds.max = f("max").and_then(Value::as_f64);
        }
        KnobType::Enum => bounds.values = Some(strings("values")),
        KnobType::Text | KnobType::Multiline => {
            bounds.max_length = f("max_length").and_then(Value::as_u64);
            bounds.pattern = pattern.as_ref().and_then(|(_, re)| re.as_ref().ok());
        }
        KnobType::Path => bounds.prefixes = Some(strings("prefixes")),
        KnobType::Boolean | KnobType::ModelAlias => {}
    }
    let reason = match bounds.check_value(kind, value) {
        Ok(()) => match pattern {
            // Checked after the length, as a pattern that does not compile
            // matches nothing.
            Some((_, Err(e))) => return Err(format!("the knob's pattern does not compile: {e}")),
            _ => return Ok(()),
        },
        Err(e) => e,
    };
    let s = value.as_str().unwrap_or_default();
    Err(match reason {
        KnobValueError::BelowMin { value, min } => format!("{value} is below min {min}"),
        KnobValueError::AboveMax { value, max } => format!("{value} is above max {max}"),
        KnobValueError::NotInteger => format!("{value} is not an integer"),
        KnobValueError::NotInValues => {
            let values = f("values")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            format!("{s:?} is not one of {}", Value::Array(values))
        }
        KnobValueError::TooLong { max, .. } => format!("longer than max_length {max}"),
        KnobValueError::NoPatternMatch => {
            let p = pattern.map(|(p, _)| p).unwrap_or_default();
            format!("{s:?} does not match pattern {p:?}")
        }
        KnobValueError::NoPrefix => {
            format!("{s:?} does not start with one of {:?}", strings("prefixes"))
        }
        KnobValueError::WrongType => format!("{value} is not a valid {} value", kind.as_str()),
    })
}

/// Where a path knob's `config:/…` and `project:/…` values land: the
/// operator's config root and the project root. A write to a path knob
/// declaring `must_exist: true` is checked there ([`check_must_exist`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KnobRoots<'a> {
    /// The operator's config root (`config:/`).
    pub config: Option<&'a Path>,
    /// The project root (`project:/`).
    pub project: Option<&'a Path>,
}

/// A path knob's `must_exist: true` (plugin-host.md § Knob types, ADDENDUM
/// §16: checked on write): the value, resolved under `roots`, names an
/// existing file or directory. Any other knob, or `must_exist` absent or
/// false, passes.
///
/// ```
/// use kaged_host_engine::{check_must_exist, KnobRoots};
/// use kaged_plugin_protocol::manifest::Knob;
/// let knob: Knob = serde_json::from_value(serde_json::json!({
///     "type": "path", "prefixes": ["config:"], "default": "config:/", "must_exist": true,
/// })).unwrap();
/// let root = std::env::temp_dir();
/// let roots = KnobRoots { config: Some(&root), project: None };
/// assert!(check_must_exist(&knob, &serde_json::json!("config:/"), roots).is_ok());
/// let missing = check_must_exist(&knob, &serde_json::json!("config:/no-such-dir-7f3a"), roots);
/// assert!(missing.unwrap_err().starts_with("\"config:/no-such-dir-7f3a\" does not exist"));
/// ```
pub fn check_must_exist(knob: &Knob, value: &Value, roots: KnobRoots<'_>) -> Result<(), String> {
    let wanted = knob.kind == KnobType::Path.as_str()
        && knob.fields.get("must_exist").and_then(Value::as_bool) == Some(true);
    let Some(text) = value.as_str().filter(|_| wanted) else {
        return Ok(());
    };
    let (root, rel, which) = if let Some(rel) = text.strip_prefix("config:") {
        (roots.config, rel, "the operator's config root")
    } else if let Some(rel) = text.strip_prefix("project:") {
        (roots.project, rel, "a project root")
    } else {
        return Ok(()); // refused by its prefixes already
    };
    let Some(root) = root else {
        return Err(format!(
            "{text:?} must exist, and there is no {which} to look in"
        ));
    };
    let rel = Path::new(rel.trim_start_matches('/'));
    if rel
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(format!("{text:?} has a `..` component"));
    }
    let at = root.join(rel);
    match at.try_exists() {
        Ok(true) => Ok(()),
        _ => Err(format!(
            "{text:?} does not exist ({}) and the knob says must_exist",
            at.display()
        )),
    }
}

/// One knob write (see the module docs), the one implementation behind
/// [`AgentHost::write_knob`] and the `up` daemon's: find the knob's
/// declaration, check the value against its bounds, merge the new
/// project-side config (refusing one that does not validate against
/// `config_schema`, audited `plugin.config_validation_failed`), send it,
/// audit `plugin.knob_write`. The caller says how the merged config is
/// sent ([`KnobWriteRequest::write`]'s `send`) and keeps what it returns.
#[derive(Debug, Clone)]
pub struct KnobWriteRequest<'a> {
    /// The plugin's manifest (its knobs and `config_schema`).
    pub manifest: &'a Manifest,
    /// The plugin's name in refusals and audits.
    pub plugin: &'a str,
    /// The knob to write.
    pub knob: &'a str,
    /// The value to write.
    pub value: Value,
    /// The project-side config the write changes.
    pub project: Map<String, Value>,
    /// The system-side config merged with it (`None`: none).
    pub system: Option<&'a Map<String, Value>>,
    /// The agent whose config changes (`None`: the daemon level).
    pub agent_path: Option<&'a str>,
    /// The plugin's declaration key on the agent, audited with a failed
    /// validation (`None`: no agent).
    pub key: Option<&'a str>,
    /// Where a path knob's value lands, for its `must_exist`.
    pub roots: KnobRoots<'a>,
}

/// A knob write that reached the plugin ([`KnobWriteRequest::write`]).
#[derive(Debug, Clone, PartialEq)]
pub struct KnobWritten {
    /// The config field written.
    pub field: String,
    /// The new project-side config, for the caller to keep.
    pub project: Map<String, Value>,
    /// The merged config the plugin accepted.
    pub merged: Map<String, Value>,
    /// The request id audited with `plugin.knob_write`.
    pub request_id: String,
}

impl KnobWriteRequest<'_> {
    /// Check and merge, then `send` the merged config (`config.update`,
    /// answering the request id to audit); on success audit
    /// `plugin.knob_write` into `audit`. Nothing is sent when a check
    /// refuses.
    pub async fn write<F, Fut>(
        self,
        audit: &AuditLog,
        send: F,
    ) -> Result<KnobWritten, KnobWriteError>
    where
        F: FnOnce(Map<String, Value>) -> Fut,
        Fut: Future<Output = Result<String, CallError>>,
    {
        let knob = self.knob.to_string();
        let unknown = || KnobWriteError::UnknownKnob {
            plugin: self.plugin.to_string(),
            knob: knob.clone(),
        };
        let (decl, field) = bound_knob(self.manifest, self.knob).ok_or_else(unknown)?;
        let field = field.to_string();
        check_knob_value(decl, &self.value)
            .and_then(|()| check_must_exist(decl, &self.value, self.roots))
            .map_err(|reason| KnobWriteError::OutOfBounds {
                knob: knob.clone(),
                reason,
            })?;
        let mut project = self.project;
        project.insert(field.clone(), self.value.clone());
        let merged = match merge_config(self.manifest, &project, self.system) {
            Ok(m) => m,
            Err(failures) => {
                for f in &failures {
                    audit.emit(
                        AuditEvent::ConfigValidationFailed,
                        self.plugin,
                        json!({"side": f.side.as_str(), "errors": f.errors, "agent_path": self.agent_path,
                               "key": self.key, "knob": knob}),
                    );
                }
                return Err(KnobWriteError::InvalidConfig {
                    knob,
                    errors: failures.into_iter().flat_map(|f| f.errors).collect(),
                });
            }
        };
        let request_id =
            send(merged.merged.clone())
                .await
                .map_err(|source| KnobWriteError::Rejected {
                    knob: knob.clone(),
                    source,
                })?;
        audit.emit(
            AuditEvent::KnobWrite,
            self.plugin,
            json!({"knob": knob, "field": field, "value": self.value,
                   "agent_path": self.agent_path, "request_id": request_id}),
        );
        Ok(KnobWritten {
            field,
            project: merged.project,
            merged: merged.merged,
            request_id,
        })
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
        // Held across the send: what the process holds is what `gate` says.
        let mut gate = running.gate.lock().await;
        let request = KnobWriteRequest {
            manifest: running.plugin.manifest(),
            plugin: &active.name,
            knob,
            value,
            project: active.project_config.clone(),
            system: Some(&active.system_config),
            agent_path: Some(agent_path),
            key: Some(&active.key),
            roots: KnobRoots {
                config: self.host.config().config_root.as_deref(),
                project: self.host.config().project_root.as_deref(),
            },
        };
        let id = &request_id;
        let written = request
            .write(self.host.audit(), |merged| async move {
                let params = Some(Value::Object(merged));
                running
                    .plugin
                    .call(methods::CONFIG_UPDATE, params, None)
                    .await?;
                Ok(id.clone())
            })
            .await?;
        *gate = Some(written.merged.clone());
        drop(gate);
        active.project_config = written.project;
        active.config = written.merged.clone();
        Ok(KnobWrite {
            field: written.field,
            request_id,
            config: written.merged,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(knob: Value, value: Value) -> Result<(), String> {
        let knob: Knob = serde_json::from_value(knob).expect("a knob");
        check_knob_value(&knob, &value)
    }

    #[test]
    fn refusals_name_the_bound() {
        let range = json!({"type": "range", "min": 1, "max": 3.5, "step": 1, "default": 2});
        assert_eq!(check(range.clone(), json!(2)), Ok(()));
        assert_eq!(
            check(range.clone(), json!(0)),
            Err("0 is below min 1".into())
        );
        assert_eq!(check(range, json!(4)), Err("4 is above max 3.5".into()));
        let int = json!({"type": "int_range", "min": 1, "max": 3, "step": 1, "default": 2});
        assert_eq!(check(int, json!(2.5)), Err("2.5 is not an integer".into()));
        let level = json!({"type": "enum", "values": ["a", "b"], "default": "a"});
        assert_eq!(
            check(level, json!("c")),
            Err(r#""c" is not one of ["a","b"]"#.into())
        );
        let text = json!({"type": "text", "default": "a", "max_length": 3, "pattern": "^a+$"});
        assert_eq!(
            check(text.clone(), json!("aaaa")),
            Err("longer than max_length 3".into())
        );
        assert_eq!(
            check(text, json!("b")),
            Err(r#""b" does not match pattern "^a+$""#.into())
        );
        let broken = json!({"type": "text", "default": "a", "pattern": "(("});
        assert!(check(broken, json!("a"))
            .is_err_and(|e| e.starts_with("the knob's pattern does not compile: ")));
        let path =
            json!({"type": "path", "default": "project:x", "prefixes": ["project:", "config:"]});
        assert_eq!(
            check(path, json!("other")),
            Err(r#""other" does not start with one of ["project:", "config:"]"#.into())
        );
        let flag = json!({"type": "boolean", "default": true});
        assert_eq!(
            check(flag, json!("a")),
            Err(r#""a" is not a valid boolean value"#.into())
        );
        assert_eq!(
            check(json!({"type": "nope"}), json!(1)),
            Err(r#"unknown knob type "nope""#.into())
        );
    }
}
