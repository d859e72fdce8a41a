//! Tool schemas and arguments (ADDENDUM §1: the SDK always validates).
//!
//! A tool's `parameters_schema` is generated from its argument type with
//! `schemars` ([`schema_for`]) and checked to have an object root
//! ([`check_tool`]). Every call's arguments are validated by deserializing
//! them into that type ([`decode_args`]): a missing or unexpected field
//! (with `#[serde(deny_unknown_fields)]`) or a value of the wrong type
//! answers `-32602` naming the field, as a JSON pointer (`/text`).
//!
//! What serde cannot check (`#[schemars(range(..))]`, `length`, `regex`,
//! hand-written constraints) is checked only with the cargo feature
//! `schema-validation`, which links the `jsonschema` crate: then the
//! arguments are first validated against the whole schema
//! (`ArgsValidator`), and [`check_tool`] also meta-validates the schema.
//! Without it a plugin binary carries no JSON Schema validator; check such
//! constraints in the handler (answering [`PluginError::invalid_params`])
//! or turn the feature on.
//!
//! [`PluginError::invalid_params`]: crate::PluginError::invalid_params

use schemars::{generate::SchemaSettings, JsonSchema};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::protocol::{ErrorCode, RpcError};

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
    /// The schema is not a valid JSON Schema (fully checked with the
    /// `schema-validation` feature; without it, the shape of `type`,
    /// `properties` and `required` only).
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
///
/// With the `schema-validation` feature the schema is meta-validated with
/// `jsonschema`; without it only `type`, `properties` and `required` are
/// checked for shape.
///
/// ```
/// use kaged_plugin_sdk::tool::{check_tool, ToolSchemaError};
/// let ok = serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}}});
/// assert_eq!(check_tool("say", &ok), Ok(()));
/// let bad = serde_json::json!({"type": "string"});
/// assert!(matches!(check_tool("say", &bad), Err(ToolSchemaError::NotObject { .. })));
/// ```
pub fn check_tool(name: &str, schema: &Value) -> Result<(), ToolSchemaError> {
    if !crate::protocol::names::is_tool_name(name) {
        return Err(ToolSchemaError::BadName { tool: name.into() });
    }
    let invalid = |reason: String| ToolSchemaError::Invalid {
        tool: name.into(),
        reason,
    };
    #[cfg(feature = "schema-validation")]
    jsonschema::meta::validate(schema).map_err(|e| invalid(e.to_string()))?;
    if let Some(reason) = shape_problem(schema) {
        return Err(invalid(reason));
    }
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        other => Err(ToolSchemaError::NotObject {
            tool: name.into(),
            found: other.map_or_else(|| "no `type`".to_string(), |v| v.to_string()),
        }),
    }
}

/// The JSON Schema type names.
const TYPE_NAMES: [&str; 7] = [
    "object", "array", "string", "number", "integer", "boolean", "null",
];

/// What is wrong with the root's `type`, `properties` and `required`, if
/// anything: a check without a validator, for hand-written schemas.
fn shape_problem(schema: &Value) -> Option<String> {
    let Value::Object(root) = schema else {
        return Some(format!("a schema must be an object, found {schema}"));
    };
    let known = |t: &Value| t.as_str().is_some_and(|t| TYPE_NAMES.contains(&t));
    match root.get("type") {
        None => {}
        Some(Value::Array(ts)) if ts.iter().all(known) => {}
        Some(t) if known(t) => {}
        Some(t) => return Some(format!("`type` {t} is not a JSON Schema type")),
    }
    match root.get("properties") {
        None => {}
        Some(Value::Object(props)) => {
            if let Some((k, v)) = props
                .iter()
                .find(|(_, v)| !v.is_object() && !v.is_boolean())
            {
                return Some(format!(
                    "property `{k}`: a schema must be an object or a boolean, found {v}"
                ));
            }
        }
        Some(p) => return Some(format!("`properties` must be an object, found {p}")),
    }
    match root.get("required") {
        None => None,
        Some(Value::Array(r)) if r.iter().all(Value::is_string) => None,
        Some(r) => Some(format!("`required` must be an array of strings, found {r}")),
    }
}

/// Deserialize a tool's arguments into its argument type. The error names
/// the offending field as a JSON pointer (`/text`, `/tags/0`; a missing or
/// unknown field by its own name), or `(root)`.
///
/// ```
/// #[derive(Debug, serde::Deserialize)]
/// struct Args { text: String }
/// let e = kaged_plugin_sdk::tool::decode_args::<Args>(serde_json::json!({"text": 5}))
///     .unwrap_err();
/// assert!(e.to_string().starts_with("invalid params: field /text: invalid type"), "{e}");
/// let e = kaged_plugin_sdk::tool::decode_args::<Args>(serde_json::json!({})).unwrap_err();
/// assert_eq!(e.to_string(), "invalid params: field /text: missing field `text`");
/// ```
pub fn decode_args<A: DeserializeOwned>(args: Value) -> Result<A, ArgsError> {
    // The fast path borrows the value and tracks no path; only a failure
    // is decoded again, with the path, to name the offending field.
    if let Ok(a) = A::deserialize(&args) {
        return Ok(a);
    }
    let e = match serde_path_to_error::deserialize::<_, A>(args) {
        Ok(a) => return Ok(a),
        Err(e) => e,
    };
    let mut field = pointer(e.path());
    let reason = e.inner().to_string();
    if let Some(name) = named_field(&reason) {
        field.push('/');
        field.push_str(&escape(name));
    }
    if field.is_empty() {
        field.push_str("(root)");
    }
    Err(ArgsError::Invalid { field, reason })
}

/// The JSON pointer of a serde path (empty for the root).
fn pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        out.push('/');
        match seg {
            Segment::Seq { index } => out.push_str(&index.to_string()),
            Segment::Map { key } => out.push_str(&escape(key)),
            Segment::Enum { variant } => out.push_str(&escape(variant)),
            Segment::Unknown => out.push('?'),
        }
    }
    out
}

/// The field a serde "missing field `x`" or "unknown field `x`" error names.
fn named_field(reason: &str) -> Option<&str> {
    let rest = reason
        .strip_prefix("missing field `")
        .or_else(|| reason.strip_prefix("unknown field `"))?;
    rest.split_once('`').map(|(name, _)| name)
}

/// A JSON pointer token (RFC 6901: `~` as `~0`, `/` as `~1`).
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// A compiled argument validator for one tool: the whole JSON Schema,
/// with `jsonschema` (cargo feature `schema-validation`).
#[cfg(feature = "schema-validation")]
pub struct ArgsValidator {
    validator: Result<jsonschema::Validator, String>,
}

#[cfg(feature = "schema-validation")]
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
    /// The tool's own schema does not compile (only with the
    /// `schema-validation` feature).
    #[error("tool schema does not compile: {0}")]
    BadSchema(String),
}

impl ArgsError {
    /// The answer: `-32602` for bad arguments, `-32603` for a bad schema.
    pub(crate) fn into_rpc(self) -> RpcError {
        let code = match self {
            ArgsError::Invalid { .. } => ErrorCode::InvalidParams,
            ArgsError::BadSchema(_) => ErrorCode::InternalError,
        };
        RpcError::new(code, self.to_string())
    }
}
