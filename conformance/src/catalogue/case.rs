//! One case of the catalogue and how binding it is.

use serde::Serialize;

/// How binding the checked rule is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Level {
    /// A failure fails the run.
    #[serde(rename = "MUST")]
    Must,
    /// A failure warns (fails the run only with `--strict`).
    #[serde(rename = "SHOULD")]
    Should,
}

impl Level {
    /// `MUST` or `SHOULD`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
        }
    }
}

/// One case of the catalogue. Cases marked `per` run once per declared
/// method, tool or hook; their ids are `id[name]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CaseDef {
    /// Stable dotted id.
    pub id: &'static str,
    /// One-line title.
    pub title: &'static str,
    /// MUST or SHOULD.
    pub level: Level,
    /// The spec section checked.
    pub spec: &'static str,
    /// The sentence of the spec the case checks.
    pub sentence: &'static str,
    /// What the case is instantiated for, if it is parameterised.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per: Option<&'static str>,
}

impl CaseDef {
    /// The id of this case run for `target` (a method, tool or hook):
    /// `id[target]`.
    pub fn instance_id(&self, target: &str) -> String {
        format!("{}[{target}]", self.id)
    }
}
