//! Project/system config merge and validation (§ Project and system config).
//!
//! For one plugin on one agent:
//!
//! 1. **Project side** (the declaration's `config:` after the cascade):
//!    every top-level key declared in `system_config_schema.properties` is
//!    rejected (the system_only rule); then each top-level property of
//!    `config_schema` with a `default` that the config does not set gets
//!    that default; then the result is validated against `config_schema`.
//! 2. **System side** (the package's operator-local block, `{}` when
//!    absent): a plugin without `system_config_schema` accepts no key here
//!    (each is a config error naming it, ADDENDUM §15); otherwise defaults
//!    from `system_config_schema` the same way, then validation against it
//!    (so a `required` secret the operator did not provide fails here).
//! 3. The merged config is the union of the two objects. A field lives on
//!    one side; where a key is set on both anyway (a system key the schema
//!    lets through that the project also sets), the project value wins
//!    (ADR-0023) and the key is reported in [`MergedConfig::collisions`].
//!
//! Defaults are applied before validation (only top-level properties): a
//! schema field that is `required` but has a `default` therefore passes. A
//! side whose schema is absent is accepted as is. A schema that does not
//! compile is reported as a validation failure of its side.

use kaged_plugin_protocol::manifest::{apply_defaults, Manifest};
use serde_json::{Map, Value};

/// Which config block failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfigSide {
    /// `AgentSpec.plugins.<key>.config`.
    Project,
    /// `local.toml [plugins."<package>"]`.
    System,
}

impl ConfigSide {
    /// The `side` of `plugin.config_validation_failed`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ConfigSide::Project => "project",
            ConfigSide::System => "system",
        }
    }
}

/// A plugin's validated configuration on one agent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MergedConfig {
    /// The project side, defaults applied.
    pub project: Map<String, Value>,
    /// The system side, defaults applied.
    pub system: Map<String, Value>,
    /// The union sent with `config.update`, the project's value where both
    /// sides set a key.
    pub merged: Map<String, Value>,
    /// The keys set on both sides (the project's value kept), in the
    /// system block's order.
    pub collisions: Vec<String>,
}

/// One side that failed validation, with readable errors
/// (`/recall_budget: "huge" is not one of ["low","mid","high"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFailure {
    /// The side.
    pub side: ConfigSide,
    /// The errors, each prefixed by the instance path.
    pub errors: Vec<String>,
}

/// The top-level property names of a schema.
fn property_names(schema: Option<&Value>) -> Vec<&str> {
    schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// Validate `config` against `schema` (absent schema: always valid).
pub fn validate(schema: Option<&Value>, config: &Map<String, Value>) -> Vec<String> {
    let Some(schema) = schema else {
        return Vec::new();
    };
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(e) => return vec![format!("the schema does not compile: {e}")],
    };
    let instance = Value::Object(config.clone());
    validator
        .iter_errors(&instance)
        .map(|e| {
            let path = e.instance_path().to_string();
            let path = if path.is_empty() {
                "(root)".to_string()
            } else {
                path
            };
            format!("{path}: {e}")
        })
        .collect()
}

/// Validate and merge the two sides for `manifest`.
///
/// Returns every failing side (project first) when any fails.
pub fn merge_config(
    manifest: &Manifest,
    project: &Map<String, Value>,
    system: Option<&Map<String, Value>>,
) -> Result<MergedConfig, Vec<ConfigFailure>> {
    let mut failures = Vec::new();

    let system_only = property_names(manifest.system_config_schema.as_ref());
    let mut project_errors: Vec<String> = project
        .keys()
        .filter(|k| system_only.contains(&k.as_str()))
        .map(|k| {
            format!(
                "/{k}: `{k}` is declared in system_config_schema and cannot be set in project config"
            )
        })
        .collect();
    let mut project = project.clone();
    apply_defaults(manifest.config_schema.as_ref(), &mut project);
    project_errors.extend(validate(manifest.config_schema.as_ref(), &project));
    if !project_errors.is_empty() {
        failures.push(ConfigFailure {
            side: ConfigSide::Project,
            errors: project_errors,
        });
    }

    let mut system = system.cloned().unwrap_or_default();
    let system_errors = match manifest.system_config_schema.as_ref() {
        None => system
            .keys()
            .map(|k| {
                format!(
                    "/{k}: `{k}` is not accepted: the plugin declares no system_config_schema, so it takes no system-side keys"
                )
            })
            .collect(),
        Some(schema) => {
            apply_defaults(Some(schema), &mut system);
            validate(Some(schema), &system)
        }
    };
    if !system_errors.is_empty() {
        failures.push(ConfigFailure {
            side: ConfigSide::System,
            errors: system_errors,
        });
    }

    if !failures.is_empty() {
        return Err(failures);
    }
    let mut merged = project.clone();
    let mut collisions = Vec::new();
    for (k, v) in &system {
        match merged.contains_key(k) {
            true => collisions.push(k.clone()),
            false => {
                merged.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(MergedConfig {
        project,
        system,
        merged,
        collisions,
    })
}
