//! The `kaged-plugin.yaml` data model (every field of the spec's Full schema).
//!
//! Fields whose values are checked by the host's validator (roles, hooks,
//! capabilities, knob types) are kept as written so that every problem can
//! be reported at once with its location; typed accessors interpret them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::capability::{Capability, CapabilityError};
use crate::{HookName, PluginRole};

/// Default `shutdown_timeout_sec`.
pub const DEFAULT_SHUTDOWN_TIMEOUT_SEC: u64 = 5;
/// Default `health_interval_sec`.
pub const DEFAULT_HEALTH_INTERVAL_SEC: u64 = 30;
/// Default `hook_timeout_sec`.
pub const DEFAULT_HOOK_TIMEOUT_SEC: u64 = 10;

/// A parsed `kaged-plugin.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Plugin identifier, slug format, max 64 chars.
    pub name: String,
    /// Semver version.
    pub version: String,
    /// The kaged plugin API version (currently 1).
    pub kaged_api: i64,
    /// One-line description, max 200 chars.
    pub description: String,
    /// Author name or handle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// SPDX license identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// Homepage URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    /// The argv to spawn; `command[0]` relative to the plugin directory.
    pub command: Vec<String>,
    /// Extra environment, merged over the daemon's defaults.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The capability allowlist.
    pub capabilities: Vec<CapabilityEntry>,
    /// Claimed roles as written (`observer`, `compactor`); see [`Manifest::effective_roles`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<String>>,
    /// Subscribed hooks as written; see [`Manifest::hook_names`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
    /// Plugin-registered tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDecl>,
    /// Custom (non-tool, non-hook) methods.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub methods: Vec<String>,
    /// Notification types the plugin may emit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notifications: Vec<String>,
    /// JSON Schema of the project-side config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_schema: Option<Value>,
    /// JSON Schema of the operator-local (secret) config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_config_schema: Option<Value>,
    /// Operator-tunable knobs, in declaration order.
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "knob_map")]
    #[schemars(with = "BTreeMap<String, Knob>")]
    pub knobs: Vec<(String, Knob)>,
    /// Seconds between `shutdown` and SIGTERM (default 5, max 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shutdown_timeout_sec: Option<i64>,
    /// Seconds between health pings (default 30, 5..=300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_interval_sec: Option<i64>,
    /// Seconds to wait for a hook answer (default 10, max 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_timeout_sec: Option<i64>,
}

/// One entry of `capabilities:`: a string (`read:fs:/opt/x`, `net:[]`) or a
/// one-key mapping (`net: []`, ADDENDUM §3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CapabilityEntry {
    /// The string form.
    Text(String),
    /// The mapping form, e.g. `{net: []}`.
    Map(BTreeMap<String, Value>),
}

impl CapabilityEntry {
    /// The capability as one string: `net: []` becomes `net:[]`; other
    /// mappings are rendered `key:value` with the value as compact JSON.
    pub fn canonical(&self) -> String {
        match self {
            CapabilityEntry::Text(s) => s.clone(),
            CapabilityEntry::Map(m) => m
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => format!("{k}:{s}"),
                    other => format!("{k}:{other}"),
                })
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// The entry as a typed [`Capability`]: [`CapabilityEntry::canonical`],
    /// parsed.
    pub fn capability(&self) -> Result<Capability, CapabilityError> {
        Capability::parse(&self.canonical())
    }
}

impl From<Capability> for CapabilityEntry {
    /// The string form of the capability's canonical text.
    fn from(cap: Capability) -> CapabilityEntry {
        CapabilityEntry::Text(cap.to_string())
    }
}

/// A tool declaration under `tools:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolDecl {
    /// The single-segment tool name (registered as `<plugin>.<name>`).
    pub name: String,
    /// What the tool does.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the tool's arguments object.
    pub parameters_schema: Value,
}

/// A knob declaration. Type-specific fields (`min`, `values`, ...) are kept
/// in `fields`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Knob {
    /// The knob type (`range`, `int_range`, `enum`, `boolean`, `text`,
    /// `multiline`, `model_alias`, `path`).
    #[serde(rename = "type")]
    pub kind: String,
    /// Short label (max 64 chars).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Help text (max 280 chars).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `config.<field>` of `config_schema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binds_to: Option<String>,
    /// Type-specific fields.
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

mod knob_map {
    use super::Knob;
    use serde::de::{MapAccess, Visitor};
    use serde::ser::SerializeMap;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[(String, Knob)], s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(v.len()))?;
        for (k, knob) in v {
            m.serialize_entry(k, knob)?;
        }
        m.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, Knob)>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vec<(String, Knob)>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of knob name to knob declaration")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, Knob>()? {
                    out.push((k, v));
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

impl Manifest {
    /// Capabilities as canonical strings (see [`CapabilityEntry::canonical`]).
    pub fn capability_strings(&self) -> Vec<String> {
        self.capabilities
            .iter()
            .map(CapabilityEntry::canonical)
            .collect()
    }

    /// The hooks that name a defined hook (unknown ones are validation errors).
    pub fn hook_names(&self) -> Vec<HookName> {
        self.hooks
            .iter()
            .filter_map(|h| HookName::parse(h))
            .collect()
    }

    /// The roles in force: as declared, or `["observer"]` when `roles` is
    /// absent and `hooks` is non-empty, otherwise none.
    pub fn effective_roles(&self) -> Vec<PluginRole> {
        match &self.roles {
            Some(r) => r
                .iter()
                .filter_map(|r| match r.as_str() {
                    "observer" => Some(PluginRole::Observer),
                    "compactor" => Some(PluginRole::Compactor),
                    _ => None,
                })
                .collect(),
            None if !self.hooks.is_empty() => vec![PluginRole::Observer],
            None => Vec::new(),
        }
    }

    /// Prefixed tool names (`<plugin>.<tool>`, ADDENDUM §1).
    pub fn prefixed_tool_names(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|t| crate::names::prefixed_tool_name(&self.name, &t.name))
            .collect()
    }

    /// Whether `method` is one of [`Manifest::prefixed_tool_names`]
    /// (without building them).
    pub fn is_prefixed_tool(&self, method: &str) -> bool {
        method
            .strip_prefix(self.name.as_str())
            .and_then(|rest| rest.strip_prefix('.'))
            .is_some_and(|tool| self.tools.iter().any(|t| t.name == tool))
    }

    /// Every method the host may call besides system methods and hooks:
    /// custom methods, then prefixed tool names.
    pub fn declared_methods(&self) -> Vec<String> {
        let mut m = self.methods.clone();
        m.extend(self.prefixed_tool_names());
        m
    }

    /// `shutdown_timeout_sec` or its default.
    pub fn shutdown_timeout_sec(&self) -> u64 {
        non_negative(self.shutdown_timeout_sec, DEFAULT_SHUTDOWN_TIMEOUT_SEC)
    }

    /// `health_interval_sec` or its default.
    pub fn health_interval_sec(&self) -> u64 {
        non_negative(self.health_interval_sec, DEFAULT_HEALTH_INTERVAL_SEC)
    }

    /// `hook_timeout_sec` or its default.
    pub fn hook_timeout_sec(&self) -> u64 {
        non_negative(self.hook_timeout_sec, DEFAULT_HOOK_TIMEOUT_SEC)
    }

    /// The storage table prefix: [`crate::names::storage_prefix`] of the name.
    pub fn storage_prefix(&self) -> String {
        crate::names::storage_prefix(&self.name)
    }
}

fn non_negative(v: Option<i64>, default: u64) -> u64 {
    v.and_then(|v| u64::try_from(v).ok()).unwrap_or(default)
}
