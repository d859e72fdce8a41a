//! What a preset is: a named, versioned bundle of agent settings (model,
//! system prompt, tools...) with a description and tags. Presets come from
//! preset files (see [`crate::source`]) or inline in `preset.install`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The longest preset name.
pub const MAX_NAME_LEN: usize = 64;
/// The longest tag.
pub const MAX_TAG_LEN: usize = 32;
/// The most tags a preset may carry.
pub const MAX_TAGS: usize = 16;
/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 500;
/// The longest version string.
pub const MAX_VERSION_LEN: usize = 32;
/// The largest settings object, serialized (and the largest preset file).
pub const MAX_PRESET_BYTES: usize = 256 * 1024;

/// A preset definition: the content of a preset file, or the `preset`
/// param of `preset.install`.
///
/// ```yaml
/// name: web-dev            # optional; must match the file name / install name
/// version: 1.2.0
/// description: TypeScript web development with strict linting.
/// tags: [web, typescript]
/// settings:                # anything: what the preset applies to an agent
///   model: sonnet
///   system_prompt: You are a careful web developer.
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PresetSpec {
    /// The preset's name; when given it must equal the name it is
    /// installed under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its version (semantic versions compare as such).
    pub version: String,
    /// One line for humans and for search.
    pub description: String,
    /// Labels for filtering and search (lowercase, `a-z0-9-`).
    #[serde(default)]
    pub tags: Vec<String>,
    /// What the preset applies: any JSON/YAML mapping.
    #[serde(default)]
    pub settings: Map<String, Value>,
}

/// Why a preset definition or a name is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PresetError {
    /// The name breaks the naming rule.
    #[error(
        "{0:?} is not a preset name (1-64 characters: lowercase letters, digits and inner hyphens)"
    )]
    BadName(String),
    /// The definition names another preset.
    #[error("the definition is named {found:?}, not {expected:?}")]
    NameMismatch {
        /// The name it is installed under.
        expected: String,
        /// The name inside the definition.
        found: String,
    },
    /// A field is out of bounds; the string says which and why.
    #[error("field `{field}`: {reason}")]
    Field {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

/// Whether `s` is a preset name: 1-64 characters of `a-z`, `0-9` and `-`,
/// not starting or ending with `-` (so it is also a safe file stem).
///
/// ```
/// use kaged_example_oh_my_pi::preset::valid_name;
/// assert!(valid_name("web-dev") && valid_name("k8s"));
/// assert!(!valid_name("../etc") && !valid_name("Web") && !valid_name("-x") && !valid_name(""));
/// ```
pub fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_NAME_LEN
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Whether `s` is a tag: like a name, at most 32 characters.
pub fn valid_tag(s: &str) -> bool {
    s.len() <= MAX_TAG_LEN && valid_name(s)
}

fn field(field: &'static str, reason: impl Into<String>) -> PresetError {
    PresetError::Field {
        field,
        reason: reason.into(),
    }
}

impl PresetSpec {
    /// Check the definition for installing as `name`, and normalize it:
    /// the name is filled in, duplicate tags are dropped (first kept),
    /// the description is trimmed.
    pub fn checked(mut self, name: &str) -> Result<PresetSpec, PresetError> {
        if !valid_name(name) {
            return Err(PresetError::BadName(name.to_owned()));
        }
        match &self.name {
            Some(found) if found != name => {
                return Err(PresetError::NameMismatch {
                    expected: name.to_owned(),
                    found: found.clone(),
                })
            }
            _ => self.name = Some(name.to_owned()),
        }
        let v = self.version.trim();
        if v.is_empty() || v.len() > MAX_VERSION_LEN || v.chars().any(char::is_whitespace) {
            return Err(field(
                "version",
                format!(
                    "{:?} must be 1-{MAX_VERSION_LEN} characters without spaces",
                    self.version
                ),
            ));
        }
        self.description = self.description.trim().to_owned();
        if self.description.is_empty() {
            return Err(field("description", "must not be empty"));
        }
        if self.description.chars().count() > MAX_DESCRIPTION_CHARS {
            return Err(field(
                "description",
                format!("is over {MAX_DESCRIPTION_CHARS} characters"),
            ));
        }
        if let Some(bad) = self.tags.iter().find(|t| !valid_tag(t)) {
            return Err(field(
                "tags",
                format!("{bad:?} is not a tag (1-{MAX_TAG_LEN} characters: lowercase letters, digits and inner hyphens)"),
            ));
        }
        let mut tags: Vec<String> = Vec::with_capacity(self.tags.len());
        for t in self.tags.drain(..) {
            if !tags.contains(&t) {
                tags.push(t);
            }
        }
        if tags.len() > MAX_TAGS {
            return Err(field("tags", format!("more than {MAX_TAGS} tags")));
        }
        self.tags = tags;
        let size = serde_json::to_string(&self.settings).map_or(usize::MAX, |s| s.len());
        if size > MAX_PRESET_BYTES {
            return Err(field(
                "settings",
                format!("{size} bytes is over the {MAX_PRESET_BYTES}-byte limit"),
            ));
        }
        Ok(self)
    }
}

/// How version `candidate` compares with `installed`: semantic versions by
/// precedence, anything else only as equal or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionOrder {
    /// `candidate` is newer.
    Newer,
    /// The same version.
    Same,
    /// `candidate` is older.
    Older,
    /// Different, and not both semantic versions.
    Different,
}

/// Compare two versions (see [`VersionOrder`]).
///
/// ```
/// use kaged_example_oh_my_pi::preset::{compare_versions, VersionOrder};
/// assert_eq!(compare_versions("1.10.0", "1.9.0"), VersionOrder::Newer);
/// assert_eq!(compare_versions("1.0.0", "1.0.0"), VersionOrder::Same);
/// assert_eq!(compare_versions("2024-06", "2024-05"), VersionOrder::Different);
/// ```
pub fn compare_versions(candidate: &str, installed: &str) -> VersionOrder {
    if candidate == installed {
        return VersionOrder::Same;
    }
    match (
        semver::Version::parse(candidate),
        semver::Version::parse(installed),
    ) {
        (Ok(c), Ok(i)) => match c.cmp_precedence(&i) {
            std::cmp::Ordering::Greater => VersionOrder::Newer,
            std::cmp::Ordering::Equal => VersionOrder::Same,
            std::cmp::Ordering::Less => VersionOrder::Older,
        },
        _ => VersionOrder::Different,
    }
}

/// Tags as stored: `,a,b,` (tags hold no comma), so `LIKE '%,a,%'` finds
/// a tag exactly.
pub fn encode_tags(tags: &[String]) -> String {
    if tags.is_empty() {
        return String::new();
    }
    format!(",{},", tags.join(","))
}

/// The inverse of [`encode_tags`].
pub fn decode_tags(s: &str) -> Vec<String> {
    s.split(',')
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}
