//! Tool schemas: generated from the argument type with `schemars`, checked
//! to be a valid JSON Schema with an object root, and used to validate every
//! call's arguments (ADDENDUM §1: the SDK always validates).

use schemars::{generate::SchemaSettings, JsonSchema};
use serde_json::Value;

/// The declaration of one tool, as it goes into the manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The single-segment tool name (`retain`).
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters_schema: Value,
}

/// Why a tool schema is unusable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolSchemaError {
    /// The schema is not a valid JSON Schema.
    #[error("tool `{tool}`: parameters_schema is not a valid JSON Schema: {reason}")]
    Invalid {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
    /// The root does not describe an object.
    #[error("tool `{tool}`: parameters_schema root must be `type: object`, found {found}")]
    NotObject {
        /// The tool.
        tool: String,
        /// What the root says.
        found: String,
    },
    /// The tool name breaks `^[a-z][a-z0-9_]*$`.
    #[error("tool name `{tool}` must be a single lowercase segment matching ^[a-z][a-z0-9_]*$")]
    BadName {
        /// The tool.
        tool: String,
    },
}

/// The `parameters_schema` of an argument type: the `schemars` schema with
/// subschemas inlined and the `$schema`/`title` annotations removed.
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Args { text: String }
/// let s = kaged_plugin_sdk::tool::schema_for::<Args>();
/// assert_eq!(s["type"], "object");
/// assert_eq!(s["required"][0], "text");
/// ```
pub fn schema_for<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(o) = &mut value {
        o.remove("$schema");
        o.remove("title");
    }
    value
}

/// Check a tool declaration: name, valid JSON Schema, object root.
pub fn check_tool(name: &str, schema: &Value) -> Result<(), ToolSchemaError> {
    if !crate::protocol::names::is_tool_name(name) {
        return Err(ToolSchemaError::BadName { tool: name.into() });
    }
    jsonschema::meta::validate(schema).map_err(|e| ToolSchemaError::Invalid {
        tool: name.into(),
        reason: e.to_string(),
    })?;
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        other => Err(ToolSchemaError::NotObject {
            tool: name.into(),
            found: other.map_or_else(|| "no `type`".to_string(), |v| v.to_string()),
        }),
    }
}

/// A compiled argument validator for one tool.
pub struct ArgsValidator {
    validator: Result<jsonschema::Validator, String>,
}

impl ArgsValidator {
    /// Compile `schema`. A schema that does not compile makes every call
    /// fail with an internal error (reported by [`check_tool`] at test time).
    pub fn new(schema: &Value) -> ArgsValidator {
        ArgsValidator {
            validator: jsonschema::validator_for(schema).map_err(|e| e.to_string()),
        }
    }

    /// Validate arguments; the error names the offending field.
    pub fn validate(&self, args: &Value) -> Result<(), ArgsError> {
        let v = self
            .validator
            .as_ref()
            .map_err(|e| ArgsError::BadSchema(e.clone()))?;
        match v.iter_errors(args).next() {
            None => Ok(()),
            Some(err) => {
                let path = err.instance_path().to_string();
                let field = if path.is_empty() {
                    "(root)".to_string()
                } else {
                    path
                };
                Err(ArgsError::Invalid {
                    field,
                    reason: err.to_string(),
                })
            }
        }
    }
}

/// Arguments that do not satisfy the tool's schema.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArgsError {
    /// The arguments break the schema at `field`.
    #[error("invalid params: field {field}: {reason}")]
    Invalid {
        /// JSON pointer of the offending value (`/text`), or `(root)`.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The tool's own schema does not compile.
    #[error("tool schema does not compile: {0}")]
    BadSchema(String),
}
