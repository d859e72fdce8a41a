//! The conformance profile a plugin's code implies (`--print-profile`):
//! for every custom method whose Rust types say something, the JSON
//! Schema of its params and of its result, and example params.
//!
//! See [`MethodSchemas`].

use schemars::JsonSchema;
use serde_json::{json, Value};

use crate::protocol::profile::{Example, MethodProfile, Profile, PROFILE_FILE};
use crate::tool::schema_for;

pub use crate::protocol::profile::PRINT_PROFILE_FLAG;

/// What the code knows of a method's params.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamsSchema {
    /// The handler takes no params: the profile calls it with `{}`.
    None,
    /// The params type's JSON Schema (its `examples` become the profile's).
    Schema(Value),
    /// The params type has no JSON Schema: the profile cannot say.
    Unknown,
}

/// The JSON Schemas of one method's params and result: what the profile
/// says of it ([`crate::PluginBuilder::method_schemas`]).
///
/// A `#[method]` handler's types are read by the macro: a params type that
/// derives `schemars::JsonSchema` gives `params_schema`, and the examples
/// in that schema (`#[schemars(example = ..)]` on the type) become the
/// profile's `examples`; a result type that derives it gives
/// `result_schema`; a handler without params is called with `{}`. Types
/// without `JsonSchema` are left out (the method then has no entry, or an
/// entry with the half that is known). With the builder API, declare the
/// same with [`crate::PluginBuilder::method_schemas`].
///
/// ```
/// use kaged_plugin_sdk::describe::MethodSchemas;
/// use kaged_plugin_sdk::{plugin, Call, PluginError};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// #[schemars(example = serde_json::json!({"text": "hello"}))]
/// struct Say { text: String }
///
/// let plugin = plugin!("echo")
///     .method("echo.say", |p: Say, _c: Call| async move { Ok::<_, PluginError>(p.text) })
///     .method_schemas("echo.say", MethodSchemas::of::<Say, String>())
///     .build()
///     .unwrap();
/// let profile = plugin.profile();
/// let say = &profile.methods["echo.say"];
/// assert_eq!(say.examples[0].params, serde_json::json!({"text": "hello"}));
/// assert_eq!(say.result_schema, Some(serde_json::json!({"type": "string"})));
/// assert!(say.params_schema.as_ref().is_some_and(|s| s.get("examples").is_none()));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MethodSchemas {
    params: ParamsSchema,
    result: Option<Value>,
}

impl MethodSchemas {
    /// Params of type `P` and a result of type `R`.
    pub fn of<P: JsonSchema, R: JsonSchema>() -> MethodSchemas {
        MethodSchemas::new(
            ParamsSchema::Schema(schema_for::<P>()),
            Some(schema_for::<R>()),
        )
    }

    /// No params (called with `{}`) and a result of type `R`.
    pub fn without_params<R: JsonSchema>() -> MethodSchemas {
        MethodSchemas::new(ParamsSchema::None, Some(schema_for::<R>()))
    }

    /// From parts: what is known of the params, and the result's schema
    /// if known.
    pub fn new(params: ParamsSchema, result: Option<Value>) -> MethodSchemas {
        MethodSchemas { params, result }
    }

    /// The method's profile entry (`None` when the types say nothing).
    pub fn entry(&self) -> Option<MethodProfile> {
        let mut entry = MethodProfile {
            result_schema: self.result.clone().filter(|s| !says_nothing(s)),
            ..MethodProfile::default()
        };
        match &self.params {
            ParamsSchema::None => entry.examples.push(Example::new(json!({}))),
            ParamsSchema::Schema(s) if !says_nothing(s) => {
                let mut schema = s.clone();
                let examples = match schema.as_object_mut().and_then(|o| o.remove("examples")) {
                    Some(Value::Array(examples)) => examples,
                    Some(one) => vec![one],
                    None => Vec::new(),
                };
                entry.examples = examples.into_iter().map(Example::new).collect();
                entry.params_schema = Some(schema);
            }
            ParamsSchema::Schema(_) | ParamsSchema::Unknown => {}
        }
        (!entry.is_empty()).then_some(entry)
    }
}

/// Whether a schema accepts anything (`true`, `{}`): nothing to profile.
fn says_nothing(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// The profile of the methods `described` (name and schemas, in
/// declaration order; a later entry for the same name wins).
pub(crate) fn profile_of(described: &[(String, MethodSchemas)]) -> Profile {
    let mut profile = Profile::default();
    for (name, schemas) in described {
        match schemas.entry() {
            Some(entry) => profile.methods.insert(name.clone(), entry),
            None => profile.methods.remove(name),
        };
    }
    profile
}

/// `profile` as YAML under a header comment naming the plugin: what
/// `--print-profile` prints.
pub(crate) fn profile_yaml(plugin: &str, profile: &Profile) -> String {
    format!(
        "# {PROFILE_FILE} of `{plugin}`, generated from its code by `{PRINT_PROFILE_FLAG}`.\n{}",
        profile.to_yaml()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    #[schemars(example = json!({"n": 1}), example = json!({"n": 2}))]
    struct Two {
        n: u8,
    }

    #[test]
    fn schema_examples_become_the_profiles_examples() {
        let entry = MethodSchemas::of::<Two, ()>().entry().expect("an entry");
        let params: Vec<&Value> = entry.examples.iter().map(|e| &e.params).collect();
        assert_eq!(params, [&json!({"n": 1}), &json!({"n": 2})]);
        let schema = entry.params_schema.expect("a params schema");
        assert_eq!(schema["required"], json!(["n"]));
        assert!(schema.get("examples").is_none(), "{schema}");
        assert_eq!(entry.result_schema, Some(json!({"type": "null"})));
    }

    #[test]
    fn what_says_nothing_is_left_out() {
        let any = MethodSchemas::new(ParamsSchema::Schema(json!(true)), Some(json!({})));
        assert_eq!(any.entry(), None);
        let unknown = MethodSchemas::new(ParamsSchema::Unknown, None);
        assert_eq!(unknown.entry(), None);
        let none = MethodSchemas::new(ParamsSchema::None, None)
            .entry()
            .expect("an entry");
        assert_eq!(none.examples, [Example::new(json!({}))]);
        let described = vec![
            ("a.one".to_string(), MethodSchemas::without_params::<u8>()),
            ("a.two".to_string(), unknown),
        ];
        let p = profile_of(&described);
        assert_eq!(p.methods.keys().collect::<Vec<_>>(), ["a.one"]);
        assert!(profile_yaml("a", &p).starts_with(
            "# kaged-conformance.yaml of `a`, generated from its code by `--print-profile`.\nprofile: 1\n"
        ));
    }
}
