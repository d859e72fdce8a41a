//! Which generated values a schema allows: the schema validator's say,
//! never the generator's. One [`Judge`] per schema, compiled once; the
//! [`Judges`] of a plugin let shrinking keep every input on its side of
//! the schema (a valid call stays valid, a broken one stays broken).

use std::collections::HashMap;
use std::sync::Arc;

use kaged_plugin_protocol::manifest::Manifest;
use serde_json::Value;

/// A schema compiled once, judging every value generated for it (a
/// schema that does not compile judges every value invalid).
#[derive(Clone)]
pub struct Judge(Option<Arc<jsonschema::Validator>>);

impl Judge {
    /// The judge of `schema`.
    pub fn of(schema: &Value) -> Judge {
        Judge(jsonschema::validator_for(schema).ok().map(Arc::new))
    }

    /// Whether `schema` allows `v`.
    pub fn valid(&self, v: &Value) -> bool {
        self.0
            .as_ref()
            .is_some_and(|validator| validator.is_valid(v))
    }
}

/// The judges of one plugin: each tool's `parameters_schema` (by its
/// method, `<plugin>.<tool>`) and the `config_schema`.
#[derive(Clone, Default)]
pub struct Judges {
    tools: HashMap<String, Judge>,
    config: Option<Judge>,
}

impl Judges {
    /// The judges of `manifest`'s schemas.
    pub fn of(manifest: &Manifest) -> Judges {
        Judges {
            tools: manifest
                .tools
                .iter()
                .map(|t| {
                    (
                        format!("{}.{}", manifest.name, t.name),
                        Judge::of(&t.parameters_schema),
                    )
                })
                .collect(),
            config: manifest.config_schema.as_ref().map(Judge::of),
        }
    }

    /// The judge of the tool called as `method`.
    pub fn tool(&self, method: &str) -> Option<&Judge> {
        self.tools.get(method)
    }

    /// The judge of the config schema.
    pub fn config(&self) -> Option<&Judge> {
        self.config.as_ref()
    }
}
