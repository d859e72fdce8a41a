//! The operator-local system config: `local.toml`'s `[plugins."<package>"]`
//! blocks, keyed by package name (never by declaration key).
//!
//! The simulator reads it from a separate YAML (or JSON) file of the same
//! shape, never from the project file (secrets stay out of committed
//! config):
//!
//! ```yaml
//! plugins:
//!   "@kaged/memory-hindsight":
//!     api_token: "${KAGED_HINDSIGHT_TOKEN}"
//! ```
//!
//! `${VAR}` in any string value is replaced from the provided environment
//! at load time; an unset variable, or a `${` without its `}`, is an error
//! naming the file, line, column and field path. `$` not followed by `{` is
//! kept as is.
//!
//! ```
//! use std::collections::BTreeMap;
//! use kaged_host_sim::agents::SystemConfig;
//! let env = BTreeMap::from([("TOKEN".to_string(), "s3cret".to_string())]);
//! let sc = SystemConfig::from_yaml_str(
//!     "plugins:\n  \"@kaged/memory-hindsight\":\n    api_token: \"tok-${TOKEN}\"\n",
//!     "local.yaml",
//!     &env,
//! ).unwrap();
//! assert_eq!(sc.get("@kaged/memory-hindsight").unwrap()["api_token"], "tok-s3cret");
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use kaged_plugin_protocol::manifest::{parse_yaml, YamlNode, YamlValue};
use serde_json::{Map, Value};

use super::error::ProjectError;
use super::yaml::{join_path, Parser};

/// The operator-local config blocks, keyed by package name.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SystemConfig {
    plugins: BTreeMap<String, Map<String, Value>>,
}

impl SystemConfig {
    /// An empty system config.
    pub fn new() -> SystemConfig {
        SystemConfig::default()
    }

    /// Set the block of `package` (already substituted).
    pub fn insert(&mut self, package: impl Into<String>, config: Map<String, Value>) {
        self.plugins.insert(package.into(), config);
    }

    /// The block of `package`.
    pub fn get(&self, package: &str) -> Option<&Map<String, Value>> {
        self.plugins.get(package)
    }

    /// Parse the YAML/JSON form, substituting `${VAR}` from `env`.
    pub fn from_yaml_str(
        text: &str,
        file: &str,
        env: &BTreeMap<String, String>,
    ) -> Result<SystemConfig, ProjectError> {
        let root = parse_yaml(text).map_err(|e| ProjectError::Syntax {
            file: file.to_string(),
            line: e.pos.map(|p| p.line),
            column: e.pos.map(|p| p.column),
            message: e.message,
        })?;
        let p = Parser { file };
        let mut out = SystemConfig::new();
        if root.is_null() {
            return Ok(out);
        }
        let top = p.expect_map(&root, "(root)")?;
        let Some((_, _, plugins)) = top.iter().find(|(k, _, _)| k == "plugins") else {
            return Ok(out);
        };
        if plugins.is_null() {
            return Ok(out);
        }
        for (package, _, block) in p.expect_map(plugins, "plugins")? {
            let path = join_path("plugins", &package);
            let config = match substitute_node(&p, block, &path, env)? {
                Value::Null => Map::new(),
                Value::Object(m) => m,
                _ => {
                    return Err(p.err(
                        block,
                        &path,
                        format!("expected a mapping, found {}", block.value.type_name()),
                    ))
                }
            };
            out.insert(package, config);
        }
        Ok(out)
    }

    /// Load the YAML/JSON form from a file.
    pub fn load(path: &Path, env: &BTreeMap<String, String>) -> Result<SystemConfig, ProjectError> {
        let text = std::fs::read_to_string(path).map_err(|source| ProjectError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        SystemConfig::from_yaml_str(&text, &path.display().to_string(), env)
    }
}

fn substitute_node(
    p: &Parser<'_>,
    node: &YamlNode,
    path: &str,
    env: &BTreeMap<String, String>,
) -> Result<Value, ProjectError> {
    Ok(match &node.value {
        YamlValue::String(s) => {
            Value::String(substitute(s, env).map_err(|m| p.err(node, path, m))?)
        }
        YamlValue::Seq(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, n)| substitute_node(p, n, &format!("{path}[{i}]"), env))
                .collect::<Result<_, _>>()?,
        ),
        YamlValue::Map(_) => {
            let mut m = Map::new();
            for (k, _, v) in p.expect_map(node, path)? {
                let child = join_path(path, &k);
                m.insert(k, substitute_node(p, v, &child, env)?);
            }
            Value::Object(m)
        }
        _ => node.to_json(),
    })
}

/// Replace every `${VAR}` of `s` from `env`.
pub fn substitute(s: &str, env: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("unterminated `${{` in `{s}`"))?;
        let name = &after[..end];
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!("`${{{name}}}` is not a valid variable reference"));
        }
        let value = env
            .get(name)
            .ok_or_else(|| format!("environment variable `{name}` is not set"))?;
        out.push_str(value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
