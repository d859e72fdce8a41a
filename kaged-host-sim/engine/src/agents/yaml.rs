//! Reading located YAML nodes (the project file): mappings with
//! duplicate-key checks, and errors naming file, line, column and field
//! path (the same path style as `local.toml`'s errors).

use kaged_plugin_protocol::manifest::YamlNode;

use super::error::{ProjectError, SourcePos};

/// Render `key` as a path segment: bare when it is a plain word, quoted in
/// brackets otherwise (`tools["memory-markdown.recall"]`).
pub(crate) fn join_path(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        format!("{parent}.{key}")
    } else {
        format!("{parent}[{key:?}]")
    }
}

/// Builds model values from located nodes, with file/line/column/path errors.
pub(crate) struct Parser<'a> {
    /// The file name used in errors.
    pub(crate) file: &'a str,
}

impl Parser<'_> {
    pub(crate) fn err(
        &self,
        node: &YamlNode,
        path: &str,
        message: impl Into<String>,
    ) -> ProjectError {
        ProjectError::Field {
            at: SourcePos {
                file: self.file.to_string(),
                line: node.pos.line,
                column: node.pos.column,
            },
            path: path.to_string(),
            message: message.into(),
        }
    }

    /// The entries of a mapping; duplicate keys are an error.
    pub(crate) fn expect_map<'n>(
        &self,
        node: &'n YamlNode,
        path: &str,
    ) -> Result<Vec<(String, &'n YamlNode, &'n YamlNode)>, ProjectError> {
        let entries = node.as_map().ok_or_else(|| {
            self.err(
                node,
                path,
                format!("expected a mapping, found {}", node.value.type_name()),
            )
        })?;
        let mut out: Vec<(String, &YamlNode, &YamlNode)> = Vec::new();
        for (k, v) in entries {
            let key = k.key_text();
            if out.iter().any(|(seen, _, _)| *seen == key) {
                return Err(self.err(k, &join_path(path, &key), "duplicate key"));
            }
            out.push((key, k, v));
        }
        Ok(out)
    }

    /// A mapping, or an empty list for `null`.
    pub(crate) fn optional_map<'n>(
        &self,
        node: Option<&'n YamlNode>,
        path: &str,
    ) -> Result<Vec<(String, &'n YamlNode, &'n YamlNode)>, ProjectError> {
        match node {
            None => Ok(Vec::new()),
            Some(n) if n.is_null() => Ok(Vec::new()),
            Some(n) => self.expect_map(n, path),
        }
    }
}
