//! What validation found: problems and the report that lists them.

use kaged_plugin_protocol::manifest::Manifest;

use super::rule::{Rule, Severity};

/// One problem found in a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Error or warning (always `rule.severity()`).
    pub severity: Severity,
    /// The rule broken.
    pub rule: Rule,
    /// The field path (`tools[1].name`); empty for the whole document.
    pub path: String,
    /// 1-based line in the YAML, when known.
    pub line: Option<usize>,
    /// 1-based column in the YAML, when known.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}]", self.severity.as_str(), self.rule.as_str())?;
        if let (Some(l), Some(c)) = (self.line, self.column) {
            write!(f, " {l}:{c}")?;
        }
        if !self.path.is_empty() {
            write!(f, " {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The outcome of validating one manifest.
#[derive(Debug, Clone)]
pub struct ValidationReport {
    /// The parsed manifest, when it parsed at all.
    pub manifest: Option<Manifest>,
    /// Every problem found, in document order.
    pub problems: Vec<Problem>,
}

impl ValidationReport {
    /// Whether any problem is an error.
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(|p| p.severity == Severity::Error)
    }

    /// The errors, in document order.
    pub fn errors(&self) -> impl Iterator<Item = &Problem> {
        self.problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
    }

    /// The warnings, in document order.
    pub fn warnings(&self) -> impl Iterator<Item = &Problem> {
        self.problems
            .iter()
            .filter(|p| p.severity == Severity::Warning)
    }

    /// The problems of one rule, in document order.
    pub fn problems_of(&self, rule: Rule) -> impl Iterator<Item = &Problem> {
        self.problems.iter().filter(move |p| p.rule == rule)
    }

    /// Errors first, then warnings, one line each
    /// (`error[name_format] 2:7 name: ...`), then a count line; empty when
    /// there is no problem.
    pub fn render_human(&self) -> String {
        if self.problems.is_empty() {
            return String::new();
        }
        let mut lines: Vec<String> = self.errors().map(Problem::to_string).collect();
        lines.extend(self.warnings().map(Problem::to_string));
        let (e, w) = (self.errors().count(), self.warnings().count());
        lines.push(format!("{e} error(s), {w} warning(s)"));
        lines.join("\n")
    }
}
