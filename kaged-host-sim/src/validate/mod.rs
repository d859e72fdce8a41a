//! Manifest validation (every rule of `plugin-host.md` § Manifest schema and
//! § Manifest validation).
//!
//! PLACEHOLDER SIGNATURE: being implemented; the signature below is the contract.

use std::path::Path;

use kaged_plugin_sdk::manifest::Manifest;

/// How serious a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The manifest is invalid.
    Error,
    /// Worth fixing; the manifest is still valid.
    Warning,
}

/// One problem found in a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// The field path (`tools[1].name`).
    pub path: String,
    /// 1-based line in the YAML, when known.
    pub line: Option<usize>,
    /// 1-based column in the YAML, when known.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// The outcome of validating one manifest.
#[derive(Debug, Clone)]
pub struct ValidationReport {
    /// The parsed manifest, when it parsed at all.
    pub manifest: Option<Manifest>,
    /// Every problem found.
    pub problems: Vec<Problem>,
}

impl ValidationReport {
    /// Whether any problem is an error.
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(|p| p.severity == Severity::Error)
    }

    /// One line per problem.
    pub fn render_human(&self) -> String {
        self.problems
            .iter()
            .map(|p| format!("{:?} {}: {}", p.severity, p.path, p.message))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Validate `DIR/kaged-plugin.yaml`.
pub fn validate_dir(dir: &Path) -> ValidationReport {
    match Manifest::load_dir(dir) {
        Ok(m) => ValidationReport {
            manifest: Some(m),
            problems: Vec::new(),
        },
        Err(e) => ValidationReport {
            manifest: None,
            problems: vec![Problem {
                severity: Severity::Error,
                path: String::new(),
                line: None,
                column: None,
                message: e.to_string(),
            }],
        },
    }
}
