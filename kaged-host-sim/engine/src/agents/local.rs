//! The operator-local system config: `local.toml` (plugin-host.md
//! "Operator-local config block key"), its `[plugins."<package>"]` tables
//! keyed by package name (never by declaration key), read from its own
//! file, never from the project file (secrets stay out of committed config):
//!
//! ```toml
//! [plugins."@kaged/memory-hindsight"]
//! api_token = "${KAGED_HINDSIGHT_TOKEN}"
//! ```
//!
//! TOML only, as the spec names it: the simulator reads no other format.
//! Other top-level keys and tables are the daemon's and are ignored. TOML
//! values become JSON ones (a date-time becomes its RFC 3339 string; a
//! float JSON cannot hold, `nan` or `inf`, is an error).
//!
//! `${VAR}` in any string value is replaced from the provided environment
//! at load time; an unset variable, or a `${` without its `}`, is an error
//! naming the file, line, column and field path. `$` not followed by `{` is
//! kept as is.
//!
//! ```
//! use std::collections::BTreeMap;
//! use kaged_host_engine::agents::SystemConfig;
//! let env = BTreeMap::from([("TOKEN".to_string(), "s3cret".to_string())]);
//! let sc = SystemConfig::from_toml_str(
//!     "[plugins.\"@kaged/memory-hindsight\"]\napi_token = \"tok-${TOKEN}\"\n",
//!     "local.toml",
//!     &env,
//! ).unwrap();
//! assert_eq!(sc.get("@kaged/memory-hindsight").unwrap()["api_token"], "tok-s3cret");
//! ```

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use serde_json::{Map, Value};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::error::{ProjectError, SourcePos};
use super::yaml::join_path;

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

    /// Parse `local.toml` text (`file` names it in errors), substituting
    /// `${VAR}` from `env`.
    pub fn from_toml_str(
        text: &str,
        file: &str,
        env: &BTreeMap<String, String>,
    ) -> Result<SystemConfig, ProjectError> {
        let reader = Reader { text, file, env };
        let root = DeTable::parse(text).map_err(|e| {
            let at = e.span().map(|s| reader.pos(s.start));
            ProjectError::Syntax {
                file: file.to_string(),
                line: at.as_ref().map(|p| p.line),
                column: at.as_ref().map(|p| p.column),
                message: e.message().to_string(),
            }
        })?;
        let mut out = SystemConfig::new();
        let Some((_, plugins)) = root
            .get_ref()
            .iter()
            .find(|(k, _)| k.get_ref() == "plugins")
        else {
            return Ok(out);
        };
        for (package, block) in reader.table(plugins, "plugins")? {
            let path = join_path("plugins", package.get_ref());
            let DeValue::Table(_) = block.get_ref() else {
                return Err(reader.expected_table(block, &path));
            };
            let Value::Object(config) = reader.value(block, &path)? else {
                return Err(reader.expected_table(block, &path));
            };
            out.insert(package.get_ref().to_string(), config);
        }
        Ok(out)
    }

    /// Load `local.toml` from a file (see [`SystemConfig::from_toml_str`]).
    pub fn load(path: &Path, env: &BTreeMap<String, String>) -> Result<SystemConfig, ProjectError> {
        let text = std::fs::read_to_string(path).map_err(|source| ProjectError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        SystemConfig::from_toml_str(&text, &path.display().to_string(), env)
    }
}

/// Turns located TOML values into JSON, with file/line/column/path errors.
struct Reader<'a> {
    text: &'a str,
    file: &'a str,
    env: &'a BTreeMap<String, String>,
}

type Entries<'t, 'i> = Vec<(
    &'t Spanned<std::borrow::Cow<'i, str>>,
    &'t Spanned<DeValue<'i>>,
)>;

impl Reader<'_> {
    /// The 1-based line and column of byte `offset`.
    fn pos(&self, offset: usize) -> SourcePos {
        let before = self.text.get(..offset).unwrap_or(self.text);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        SourcePos {
            file: self.file.to_string(),
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }

    fn err(&self, span: Range<usize>, path: &str, message: impl Into<String>) -> ProjectError {
        ProjectError::Field {
            at: self.pos(span.start),
            path: path.to_string(),
            message: message.into(),
        }
    }

    fn expected_table(&self, node: &Spanned<DeValue<'_>>, path: &str) -> ProjectError {
        let found = node.get_ref().type_str();
        self.err(
            node.span(),
            path,
            format!("expected a table, found {found}"),
        )
    }

    /// The entries of a table value.
    fn table<'t, 'i>(
        &self,
        node: &'t Spanned<DeValue<'i>>,
        path: &str,
    ) -> Result<Entries<'t, 'i>, ProjectError> {
        match node.get_ref() {
            DeValue::Table(t) => Ok(t.iter().collect()),
            _ => Err(self.expected_table(node, path)),
        }
    }

    fn value(&self, node: &Spanned<DeValue<'_>>, path: &str) -> Result<Value, ProjectError> {
        let err = |m: String| self.err(node.span(), path, m);
        Ok(match node.get_ref() {
            DeValue::String(s) => Value::String(substitute(s, self.env).map_err(err)?),
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .map(Value::from)
                .map_err(|_| err(format!("integer {i} does not fit in 64 bits")))?,
            DeValue::Float(f) => f
                .as_str()
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| err(format!("float {f} cannot be represented in JSON")))?,
            DeValue::Boolean(b) => Value::Bool(*b),
            DeValue::Datetime(d) => Value::String(d.to_string()),
            DeValue::Array(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, n)| self.value(n, &format!("{path}[{i}]")))
                    .collect::<Result<_, _>>()?,
            ),
            DeValue::Table(_) => {
                let mut m = Map::new();
                for (k, v) in self.table(node, path)? {
                    let child = join_path(path, k.get_ref());
                    m.insert(k.get_ref().to_string(), self.value(v, &child)?);
                }
                Value::Object(m)
            }
        })
    }
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
