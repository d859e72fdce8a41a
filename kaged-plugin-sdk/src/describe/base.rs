//! The base file: the manifest fields the code cannot know.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::manifest::{parse_yaml, CapabilityEntry, Knob};

/// Manifest fields decided by the code; a base file may not set them.
pub const CODE_DERIVED_FIELDS: [&str; 9] = [
    "name",
    "version",
    "kaged_api",
    "roles",
    "hooks",
    "tools",
    "methods",
    "notifications",
    "config_schema",
];

/// The metadata part of a manifest, as written in a base file
/// (`kaged-plugin.base.yaml`). Every field is optional.
///
/// ```
/// let base = kaged_plugin_sdk::describe::parse_base(
///     "description: Echoes.\ncommand: [./echo]\ncapabilities:\n  - net: []\nshutdown_timeout_sec: 5\n",
/// ).unwrap();
/// assert_eq!(base.description.as_deref(), Some("Echoes."));
/// assert_eq!(base.capabilities[0].canonical(), "net:[]");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ManifestBase {
    /// One-line description.
    pub description: Option<String>,
    /// Author name or handle.
    pub author: Option<String>,
    /// SPDX license identifier.
    pub license: Option<String>,
    /// Homepage URL.
    pub homepage: Option<String>,
    /// The argv the host spawns.
    pub command: Vec<String>,
    /// Extra environment.
    pub env: BTreeMap<String, String>,
    /// The capability allowlist.
    pub capabilities: Vec<CapabilityEntry>,
    /// JSON Schema of the operator-local config.
    pub system_config_schema: Option<Value>,
    /// Knobs, in file order.
    pub knobs: Vec<(String, Knob)>,
    /// `shutdown_timeout_sec`.
    pub shutdown_timeout_sec: Option<i64>,
    /// `health_interval_sec`.
    pub health_interval_sec: Option<i64>,
    /// `hook_timeout_sec`.
    pub hook_timeout_sec: Option<i64>,
    /// Which fields the text set (so that a merge overrides only those).
    set: Vec<String>,
}

/// Why a base file is unusable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BaseError {
    /// Not YAML.
    #[error("{}{message}", at(*line))]
    Syntax {
        /// What the parser said.
        message: String,
        /// 1-based line, when known.
        line: Option<usize>,
    },
    /// The document is not a mapping.
    #[error("the base file must be a YAML mapping of manifest fields")]
    NotAMapping,
    /// The base sets a field the code decides.
    #[error("`{0}` comes from the code (it is generated); remove it from the base file")]
    CodeDerived(String),
    /// A field has the wrong shape, or is not a manifest field.
    #[error("field `{path}`: {message}")]
    Field {
        /// The field path (`knobs.store`).
        path: String,
        /// What is wrong.
        message: String,
    },
}

fn at(line: Option<usize>) -> String {
    line.map(|l| format!("line {l}: ")).unwrap_or_default()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    description: Option<String>,
    author: Option<String>,
    license: Option<String>,
    homepage: Option<String>,
    #[serde(default)]
    command: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    capabilities: Vec<CapabilityEntry>,
    system_config_schema: Option<Value>,
    #[serde(default)]
    knobs: Map<String, Value>,
    shutdown_timeout_sec: Option<i64>,
    health_interval_sec: Option<i64>,
    hook_timeout_sec: Option<i64>,
}

/// Parse a base file. Fields the code decides ([`CODE_DERIVED_FIELDS`])
/// are refused, as are fields that are not manifest fields.
pub fn parse_base(text: &str) -> Result<ManifestBase, BaseError> {
    let root = parse_yaml(text).map_err(|e| BaseError::Syntax {
        message: e.message,
        line: e.pos.map(|p| p.line),
    })?;
    let json = match root.to_json() {
        Value::Null => Value::Object(Map::new()),
        v @ Value::Object(_) => v,
        _ => return Err(BaseError::NotAMapping),
    };
    let keys: Vec<String> = json
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    if let Some(k) = keys
        .iter()
        .find(|k| CODE_DERIVED_FIELDS.contains(&k.as_str()))
    {
        return Err(BaseError::CodeDerived(k.clone()));
    }
    let raw: Raw = serde_path_to_error::deserialize(&json).map_err(|e| BaseError::Field {
        path: e.path().to_string(),
        message: e.inner().to_string(),
    })?;
    let mut knobs = Vec::new();
    for (name, v) in raw.knobs {
        let knob: Knob = serde_json::from_value(v).map_err(|e| BaseError::Field {
            path: format!("knobs.{name}"),
            message: e.to_string(),
        })?;
        knobs.push((name, knob));
    }
    Ok(ManifestBase {
        description: raw.description,
        author: raw.author,
        license: raw.license,
        homepage: raw.homepage,
        command: raw.command,
        env: raw.env,
        capabilities: raw.capabilities,
        system_config_schema: raw.system_config_schema,
        knobs,
        shutdown_timeout_sec: raw.shutdown_timeout_sec,
        health_interval_sec: raw.health_interval_sec,
        hook_timeout_sec: raw.hook_timeout_sec,
        set: keys,
    })
}

impl ManifestBase {
    /// Take every field `other`'s text set.
    pub(crate) fn merge(&mut self, other: ManifestBase) {
        let set = |f: &str| other.set.iter().any(|k| k == f);
        macro_rules! take {
            ($($field:ident),*) => {$(
                if set(stringify!($field)) {
                    self.$field = other.$field.clone();
                }
            )*};
        }
        take!(
            description,
            author,
            license,
            homepage,
            command,
            env,
            capabilities,
            system_config_schema,
            knobs,
            shutdown_timeout_sec,
            health_interval_sec,
            hook_timeout_sec
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_code_derived_and_unknown_fields() {
        assert_eq!(
            parse_base("methods: [a.b]\n"),
            Err(BaseError::CodeDerived("methods".into()))
        );
        let e = parse_base("descripton: x\n").unwrap_err();
        assert!(matches!(e, BaseError::Field { .. }), "{e:?}");
        assert!(e.to_string().contains("descripton"), "{e}");
        assert_eq!(parse_base("- a\n"), Err(BaseError::NotAMapping));
    }

    #[test]
    fn merge_overrides_only_the_fields_set() {
        let mut b = parse_base("description: one\nauthor: me\n").unwrap();
        b.merge(parse_base("description: two\n").unwrap());
        assert_eq!(b.description.as_deref(), Some("two"));
        assert_eq!(b.author.as_deref(), Some("me"));
    }

    #[test]
    fn knobs_keep_file_order() {
        let b =
            parse_base("knobs:\n  zeta:\n    type: boolean\n  alpha:\n    type: text\n").unwrap();
        let names: Vec<&str> = b.knobs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha"]);
    }
}
