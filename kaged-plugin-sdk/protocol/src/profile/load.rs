//! Loading a profile from YAML, with the line, column and field path of the
//! first problem, and rendering one back ([`Profile::to_yaml`]).

use std::path::Path;

use serde_json::Value;

use super::{Profile, PROFILE_VERSION};
use crate::manifest::{locate, parse_yaml, path_segments, render_path, value_to_yaml, YamlNode};

/// Why a profile could not be loaded. The messages name the field
/// (`methods.notes.add.examples[0].params`) and where it is; the caller
/// names the file.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file could not be read.
    #[error("cannot read it: {0}")]
    Io(#[source] std::io::Error),
    /// The text is not YAML.
    #[error("{}{message}", at(*line, *column))]
    Syntax {
        /// What the parser said.
        message: String,
        /// 1-based line, when known.
        line: Option<usize>,
        /// 1-based column, when known.
        column: Option<usize>,
    },
    /// The document is not a mapping.
    #[error("a profile is a YAML mapping starting with `profile: {PROFILE_VERSION}`")]
    NotAMapping,
    /// No `profile:` key.
    #[error("no `profile:` version key: start the file with `profile: {PROFILE_VERSION}`")]
    NoVersion,
    /// A version this crate does not read.
    #[error("{}profile: version {found} is not supported: this suite reads `profile: {PROFILE_VERSION}`", at(Some(*line), Some(*column)))]
    Version {
        /// The version as written.
        found: String,
        /// 1-based line of the value.
        line: usize,
        /// 1-based column of the value.
        column: usize,
    },
    /// A field has the wrong shape, or is not a profile field.
    #[error("{}{path}: {message}", at(Some(*line), Some(*column)))]
    Field {
        /// The field path (`methods.notes.add.examples[0]`).
        path: String,
        /// What is wrong.
        message: String,
        /// 1-based line of the nearest node.
        line: usize,
        /// 1-based column of the nearest node.
        column: usize,
    },
}

fn at(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!("line {l}, column {c}: "),
        (Some(l), None) => format!("line {l}: "),
        _ => String::new(),
    }
}

impl Profile {
    /// Parse a profile from YAML text.
    ///
    /// ```
    /// use kaged_plugin_protocol::profile::Profile;
    /// let p = Profile::from_yaml_str("profile: 1\nmethods:\n  a.b:\n    examples:\n      - params: {x: 1}\n").unwrap();
    /// assert_eq!(p.methods["a.b"].examples[0].params["x"], 1);
    /// let e = Profile::from_yaml_str("profile: 2\n").unwrap_err();
    /// assert_eq!(e.to_string(), "line 1, column 10: profile: version 2 is not supported: this suite reads `profile: 1`");
    /// ```
    pub fn from_yaml_str(text: &str) -> Result<Profile, ProfileError> {
        let root = parse_yaml(text).map_err(|e| ProfileError::Syntax {
            message: e.message,
            line: e.pos.map(|p| p.line),
            column: e.pos.map(|p| p.column),
        })?;
        Profile::from_node(&root)
    }

    /// Build a profile from an already parsed located tree (the version is
    /// checked first, so that a newer file is refused for its version, not
    /// for the fields it adds).
    pub fn from_node(root: &YamlNode) -> Result<Profile, ProfileError> {
        if root.as_map().is_none() {
            return Err(ProfileError::NotAMapping);
        }
        let version = root.get("profile").ok_or(ProfileError::NoVersion)?;
        if version.as_i64() != i64::try_from(PROFILE_VERSION).ok() {
            return Err(ProfileError::Version {
                found: match version.to_json() {
                    Value::String(s) => format!("{s:?}"),
                    v => v.to_string(),
                },
                line: version.pos.line,
                column: version.pos.column,
            });
        }
        let json = root.to_json();
        serde_path_to_error::deserialize::<_, Profile>(&json).map_err(|e| {
            let segments = path_segments(e.path());
            let node = locate(root, &segments);
            ProfileError::Field {
                path: render_path(&segments),
                message: e.inner().to_string(),
                line: node.pos.line,
                column: node.pos.column,
            }
        })
    }

    /// Read and parse the profile at `path`.
    pub fn load(path: &Path) -> Result<Profile, ProfileError> {
        let text = std::fs::read_to_string(path).map_err(ProfileError::Io)?;
        Profile::from_yaml_str(&text)
    }

    /// The profile as YAML: keys in model order, methods by name,
    /// deterministic quoting, two-space indentation.
    ///
    /// ```
    /// use kaged_plugin_protocol::profile::{Example, MethodProfile, Profile};
    /// let mut p = Profile::default();
    /// p.methods.insert("a.b".into(), MethodProfile {
    ///     examples: vec![Example::new(serde_json::json!({"x": 1}))],
    ///     ..MethodProfile::default()
    /// });
    /// assert_eq!(p.to_yaml(), "profile: 1\nmethods:\n  a.b:\n    examples:\n      - params:\n          x: 1\n");
    /// ```
    pub fn to_yaml(&self) -> String {
        match serde_json::to_value(self) {
            Ok(v) => value_to_yaml(&v),
            // A Profile is plain data: serializing it cannot fail.
            Err(e) => format!("# cannot serialize the profile: {e}\n"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{CallAs, Example, InvalidParams, MethodProfile};
    use serde_json::json;

    const FULL: &str = "\
profile: 1
methods:
  notes.add:
    params_schema: {type: object, required: [text]}
    result_schema: {type: object}
    examples:
      - params: {text: hi}
        result: {added: 1}
      - params: {text: there}
        result: null
        context: agent
    invalid:
      - params: {text: 5}
        code: -32602
";

    #[test]
    fn reads_every_field_and_renders_back_the_same_profile() {
        let p = Profile::from_yaml_str(FULL).expect("valid");
        let m = &p.methods["notes.add"];
        assert_eq!(
            m.params_schema,
            Some(json!({"type": "object", "required": ["text"]}))
        );
        assert_eq!(m.examples[0].result, Some(json!({"added": 1})));
        // `result: null` is a result to expect, not an absent one.
        assert_eq!(m.examples[1].result, Some(Value::Null));
        assert_eq!(m.examples[1].context, CallAs::Agent);
        assert_eq!(
            m.invalid,
            [InvalidParams {
                params: json!({"text": 5}),
                code: -32602,
                context: CallAs::Daemon
            }]
        );
        let again = Profile::from_yaml_str(&p.to_yaml()).expect("its own output parses");
        assert_eq!(again, p);
    }

    #[test]
    fn errors_name_the_field_and_where_it_is() {
        let e = Profile::from_yaml_str("profile: 1\nmethods:\n  a.b:\n    exmples: []\n")
            .expect_err("unknown field");
        let text = e.to_string();
        assert!(
            text.starts_with("line 4, column 14: methods.a.b.exmples: unknown field `exmples`"),
            "{text}"
        );
        let e = Profile::from_yaml_str(
            "profile: 1\nmethods:\n  a.b:\n    invalid:\n      - params: {}\n        code: x\n",
        )
        .expect_err("a code is an integer");
        assert!(
            e.to_string()
                .contains("methods.a.b.invalid[0].code: invalid type"),
            "{e}"
        );
        assert!(matches!(
            Profile::from_yaml_str("methods: {}\n"),
            Err(ProfileError::NoVersion)
        ));
        assert!(matches!(
            Profile::from_yaml_str("- 1\n"),
            Err(ProfileError::NotAMapping)
        ));
        let e = Profile::from_yaml_str("profile: \"1\"\n").expect_err("a string version");
        assert!(
            e.to_string().contains("version \"1\" is not supported"),
            "{e}"
        );
        assert!(matches!(
            Profile::from_yaml_str("profile: [1\n"),
            Err(ProfileError::Syntax { .. })
        ));
    }

    #[test]
    fn an_example_without_result_renders_without_one() {
        let mut p = Profile::default();
        p.methods.insert(
            "a.b".into(),
            MethodProfile {
                examples: vec![Example::new(json!({}))],
                ..MethodProfile::default()
            },
        );
        assert_eq!(
            p.to_yaml(),
            "profile: 1\nmethods:\n  a.b:\n    examples:\n      - params: {}\n"
        );
    }
}
