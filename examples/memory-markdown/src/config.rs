//! Configuration: the project-side half (committed, `config_schema`), the
//! operator-local half (secrets, `system_config_schema`) and the merged
//! object `config.update` carries.
//!
//! The host merges both halves into one object (`plugin-host.md`, Project
//! and system config). The SDK takes the `#[config]` type's `JsonSchema` as
//! `config_schema`, so [`Config`] deserializes the merged object but reports
//! only [`ProjectConfig`]'s schema: the secret fields stay out of the
//! committed schema, where they would collide with `system_config_schema`.

use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// Bounds of `recent_on_start` (also the knob's bounds).
pub const RECENT_ON_START_MAX: u32 = 20;
/// Bounds of `retain_every_n_turns` (also the knob's bounds).
pub const RETAIN_EVERY_MAX: u32 = 20;

pub use crate::paths::Isolation;

/// The project-side config (`AgentSpec.plugins.<name>.config`, committed).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectConfig {
    /// `agent` (default): each agent remembers on its own; `project`: the
    /// project's agents share one memory.
    #[serde(default)]
    #[schemars(schema_with = "isolation_schema")]
    pub isolation: Isolation,
    /// Where memory files live: `config:/<path>` (under the operator's config
    /// root), `project:/<path>` (under `<config root>/projects/<project_id>`)
    /// or an absolute path.
    #[serde(default = "default_store")]
    #[schemars(default = "default_store", regex(pattern = r"^(config:/|project:/|/)"))]
    pub store: String,
    /// Tags added to every entry the plugin writes (each non-empty, at
    /// most 64 characters, one line).
    #[serde(default)]
    #[schemars(inner(
        length(min = 1, max = 64),
        regex(pattern = r"^[^\x00-\x1f]*[^\s\x00-\x1f][^\x00-\x1f]*$")
    ))]
    pub tags: Vec<String>,
    /// How many recent retained entries `on_session_start` shows the agent
    /// (0: none).
    #[serde(default = "default_recent")]
    #[schemars(default = "default_recent", range(max = 20))]
    pub recent_on_start: u32,
    /// Save the idle transcript after every N user turns.
    #[serde(default = "default_every")]
    #[schemars(default = "default_every", range(min = 1, max = 20))]
    pub retain_every_n_turns: u32,
}

fn isolation_schema(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({ "type": "string", "enum": ["agent", "project"], "default": "agent" })
}

fn default_store() -> String {
    "config:/memory".to_string()
}

fn default_recent() -> u32 {
    5
}

fn default_every() -> u32 {
    3
}

impl Default for ProjectConfig {
    fn default() -> ProjectConfig {
        ProjectConfig {
            isolation: Isolation::Agent,
            store: default_store(),
            tags: Vec::new(),
            recent_on_start: default_recent(),
            retain_every_n_turns: default_every(),
        }
    }
}

/// The operator-local config (`local.toml`, never committed): secrets.
#[derive(Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SystemConfig {
    /// Secret strings (API tokens, passwords) that must never reach the
    /// memory files: every occurrence is replaced by `[redacted]` before an
    /// entry is written.
    #[serde(default)]
    pub redact_secrets: Vec<String>,
}

impl SystemConfig {
    /// The field names of this half, as they appear in the merged object.
    pub const FIELDS: [&'static str; 1] = ["redact_secrets"];

    /// `text` with every configured secret replaced by `[redacted]`.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in self.redact_secrets.iter().filter(|s| !s.is_empty()) {
            out = out.replace(secret.as_str(), "[redacted]");
        }
        out
    }
}

/// Never prints the secrets themselves.
impl fmt::Debug for SystemConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SystemConfig")
            .field(
                "redact_secrets",
                &format_args!("[{} hidden]", self.redact_secrets.len()),
            )
            .finish()
    }
}

/// The merged config `config.update` carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// The committed half.
    pub project: ProjectConfig,
    /// The operator-local half.
    pub system: SystemConfig,
}

/// Deserialize one half, naming the offending field in the error. Errors
/// of the operator-local half never quote the value (serde's messages do:
/// `invalid type: string "tok_…"`), since it may be a secret.
fn half<'de, T: Deserialize<'de>>(map: Map<String, Value>, secret: bool) -> Result<T, String> {
    serde_path_to_error::deserialize(Value::Object(map)).map_err(|e| {
        let path = e.path().to_string();
        let what = if secret {
            "invalid value (operator-local values are never echoed): expected a list of strings"
                .to_string()
        } else {
            e.inner().to_string()
        };
        if path == "." {
            what
        } else {
            format!("field `{path}`: {what}")
        }
    })
}

impl<'de> Deserialize<'de> for Config {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Config, D::Error> {
        let merged = Map::<String, Value>::deserialize(d)?;
        let (system, project): (Map<_, _>, Map<_, _>) = merged
            .into_iter()
            .partition(|(k, _)| SystemConfig::FIELDS.contains(&k.as_str()));
        Ok(Config {
            project: half(project, false).map_err(D::Error::custom)?,
            system: half(system, true).map_err(D::Error::custom)?,
        })
    }
}

/// The schema of the committed half only (it becomes `config_schema`).
impl JsonSchema for Config {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        ProjectConfig::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        ProjectConfig::json_schema(generator)
    }
}

impl Config {
    /// Check what the types cannot: the ranges and the store's form. The
    /// error names the field.
    pub fn check(&self) -> Result<(), String> {
        let p = &self.project;
        if p.recent_on_start > RECENT_ON_START_MAX {
            return Err(format!(
                "field `recent_on_start`: {} is above the maximum {RECENT_ON_START_MAX}",
                p.recent_on_start
            ));
        }
        if p.retain_every_n_turns == 0 || p.retain_every_n_turns > RETAIN_EVERY_MAX {
            return Err(format!(
                "field `retain_every_n_turns`: {} is outside 1..={RETAIN_EVERY_MAX}",
                p.retain_every_n_turns
            ));
        }
        if let Some(t) = p.tags.iter().find(|t| !crate::entry::valid_tag(t)) {
            return Err(format!(
                "field `tags`: tag {t:?} must be non-empty, at most 64 characters, without newlines"
            ));
        }
        crate::paths::StoreSpec::parse(&p.store).map_err(|e| format!("field `store`: {e}"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_apply_and_the_halves_split() {
        let c: Config =
            serde_json::from_value(json!({"tags": ["x"], "redact_secrets": ["s3cr3t"]}))
                .expect("valid");
        assert_eq!(c.project.store, "config:/memory");
        assert_eq!(
            (c.project.recent_on_start, c.project.retain_every_n_turns),
            (5, 3)
        );
        assert_eq!(c.system.redact("a s3cr3t b"), "a [redacted] b");
        assert!(!format!("{c:?}").contains("s3cr3t"));
        assert!(c.check().is_ok());
    }

    #[test]
    fn errors_name_the_field() {
        let e =
            serde_json::from_value::<Config>(json!({"recent_on_start": "many"})).expect_err("bad");
        assert!(e.to_string().contains("recent_on_start"), "{e}");
        let e = serde_json::from_value::<Config>(json!({"colour": "red"})).expect_err("unknown");
        assert!(e.to_string().contains("colour"), "{e}");
        let c: Config = serde_json::from_value(json!({"retain_every_n_turns": 0})).expect("parses");
        assert!(c
            .check()
            .expect_err("range")
            .contains("retain_every_n_turns"));
        let e = serde_json::from_value::<Config>(json!({"redact_secrets": "tok_1"}))
            .expect_err("not a list");
        assert!(
            e.to_string().contains("redact_secrets") && !e.to_string().contains("tok_1"),
            "{e}"
        );
        let c: Config = serde_json::from_value(json!({"store": "memory"})).expect("parses");
        assert!(c.check().expect_err("store").contains("store"));
    }

    #[test]
    fn the_schema_is_the_committed_half() {
        let s = kaged_plugin_sdk::tool::schema_for::<Config>();
        assert_eq!(s["additionalProperties"], false);
        assert!(s["properties"].get("redact_secrets").is_none());
        assert_eq!(
            s["properties"]["isolation"]["enum"],
            json!(["agent", "project"])
        );
        assert_eq!(s["properties"]["store"]["default"], "config:/memory");
    }
}
