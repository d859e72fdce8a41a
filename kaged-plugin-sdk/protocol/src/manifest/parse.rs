//! Loading a manifest from YAML, with the line and column of the first
//! problem in every error.
//!
//! The text is first parsed into a located tree ([`parse_yaml`]); the tree is
//! then deserialized into [`Manifest`]. A model error names the field path
//! (`tools[1].name`) and the location of that node in the YAML.

use std::path::{Path, PathBuf};

use super::{parse_yaml, Manifest, Pos, YamlNode};

/// The manifest's file name inside a plugin directory.
pub const MANIFEST_FILE: &str = "kaged-plugin.yaml";

/// The command-line flag every SDK plugin answers with its manifest
/// (printed on stdout, the plugin not started).
pub const PRINT_MANIFEST_FLAG: &str = "--print-manifest";

/// Why a manifest could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The text is not YAML, or the YAML does not fit the manifest model.
    #[error("{}", yaml_display(message, *line, *column, path.as_deref()))]
    Yaml {
        /// What is wrong (without the location).
        message: String,
        /// 1-based line of the offending node, when known.
        line: Option<usize>,
        /// 1-based column of the offending node, when known.
        column: Option<usize>,
        /// The field path (`tools[1].name`), when the problem is in a field
        /// rather than in the YAML syntax.
        path: Option<String>,
    },
}

fn yaml_display(
    message: &str,
    line: Option<usize>,
    column: Option<usize>,
    path: Option<&str>,
) -> String {
    let mut out = String::new();
    if let (Some(l), Some(c)) = (line, column) {
        out.push_str(&format!("line {l}, column {c}: "));
    }
    if let Some(p) = path.filter(|p| !p.is_empty()) {
        out.push_str(&format!("{p}: "));
    }
    out.push_str(message);
    out
}

impl ManifestError {
    /// The location of a YAML or model error.
    pub fn pos(&self) -> Option<Pos> {
        match self {
            ManifestError::Yaml {
                line: Some(line),
                column: Some(column),
                ..
            } => Some(Pos {
                line: *line,
                column: *column,
            }),
            _ => None,
        }
    }
}

impl Manifest {
    /// Parse a manifest from YAML text.
    pub fn from_yaml_str(text: &str) -> Result<Manifest, ManifestError> {
        let root = parse_yaml(text).map_err(|e| ManifestError::Yaml {
            message: e.message,
            line: e.pos.map(|p| p.line),
            column: e.pos.map(|p| p.column),
            path: None,
        })?;
        Manifest::from_node(&root)
    }

    /// Build a manifest from an already parsed located tree.
    pub fn from_node(root: &YamlNode) -> Result<Manifest, ManifestError> {
        let json = root.to_json();
        serde_path_to_error::deserialize::<_, Manifest>(&json).map_err(|e| {
            let segments = path_segments(e.path());
            let node = locate(root, &segments);
            let path = render_path(&segments);
            ManifestError::Yaml {
                message: e.inner().to_string(),
                line: Some(node.pos.line),
                column: Some(node.pos.column),
                path: Some(path),
            }
        })
    }

    /// Load `DIR/kaged-plugin.yaml`.
    pub fn load_dir(dir: &Path) -> Result<Manifest, ManifestError> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).map_err(|source| ManifestError::Io {
            path: path.clone(),
            source,
        })?;
        Manifest::from_yaml_str(&text)
    }
}

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    /// A mapping key.
    Key(String),
    /// A sequence index.
    Index(usize),
}

/// The field path of a serde error, as [`PathSegment`]s.
pub(crate) fn path_segments(path: &serde_path_to_error::Path) -> Vec<PathSegment> {
    use serde_path_to_error::Segment;
    path.iter()
        .filter_map(|s| match s {
            Segment::Seq { index } => Some(PathSegment::Index(*index)),
            Segment::Map { key } => Some(PathSegment::Key(key.clone())),
            Segment::Enum { variant } => Some(PathSegment::Key(variant.clone())),
            Segment::Unknown => None,
        })
        .collect()
}

/// Render a field path the way problems name fields: `tools[1].name`,
/// `knobs.store.binds_to`, `capabilities[2]`.
pub fn render_path(segments: &[PathSegment]) -> String {
    let mut out = String::new();
    for s in segments {
        match s {
            PathSegment::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            PathSegment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The deepest node of `root` along `segments` (the node itself when the
/// whole path exists, otherwise its nearest existing ancestor).
pub fn locate<'a>(root: &'a YamlNode, segments: &[PathSegment]) -> &'a YamlNode {
    let mut node = root;
    for s in segments {
        let next = match s {
            PathSegment::Key(k) => node.get(k),
            PathSegment::Index(i) => node.index(*i),
        };
        match next {
            Some(n) => node = n,
            None => break,
        }
    }
    node
}
