//! Manifest validation: every rule of `plugin-host.md` § Manifest schema
//! (Field-by-field), § Manifest validation, § Capability grammar, § Plugin
//! knob schema, § Project and system config, § Plugin tool naming and
//! § Plugin-declared methods, with ADDENDUM §1 and §3.
//!
//! The manifest is parsed into a located YAML tree and every rule runs over
//! that tree, so all problems are reported at once, each with its rule id
//! ([`Rule`]), field path (`tools[1].name`) and YAML line and column.

mod capabilities;
mod fields;
mod knob_fields;
mod knob_types;
mod knob_value;
mod knobs;
mod locate;
mod roles;
mod rule;
mod schemas;
mod tools;

use std::path::Path;

use kaged_plugin_protocol::manifest::{parse_yaml, Manifest, YamlNode, MANIFEST_FILE};

pub use capabilities::{parse_capability, Capability, CapabilityError, PATH_URI_PREFIXES};
pub use fields::{HOST_API_VERSION, TOP_LEVEL_KEYS};
pub use knob_types::KnobType;
pub(crate) use knob_value::{KnobBounds, KnobValueError};
pub use rule::Rule;

use locate::Ctx;

/// How serious a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The manifest is invalid.
    Error,
    /// Worth fixing; the manifest is still valid.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

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

/// Validate `DIR/kaged-plugin.yaml`.
pub fn validate_dir(dir: &Path) -> ValidationReport {
    let path = dir.join(MANIFEST_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => validate_str(&text),
        Err(e) => ValidationReport {
            manifest: None,
            problems: vec![Problem {
                severity: Rule::ManifestUnreadable.severity(),
                rule: Rule::ManifestUnreadable,
                path: String::new(),
                line: None,
                column: None,
                message: format!("cannot read {}: {e}", path.display()),
            }],
        },
    }
}

/// Validate manifest text.
pub fn validate_str(text: &str) -> ValidationReport {
    match parse_yaml(text) {
        Ok(root) => validate_node(&root),
        Err(e) => ValidationReport {
            manifest: None,
            problems: vec![Problem {
                severity: Rule::YamlSyntax.severity(),
                rule: Rule::YamlSyntax,
                path: String::new(),
                line: e.pos.map(|p| p.line),
                column: e.pos.map(|p| p.column),
                message: format!("YAML syntax error: {}", e.message),
            }],
        },
    }
}

/// Validate an already parsed manifest tree.
pub fn validate_node(root: &YamlNode) -> ValidationReport {
    let mut ctx = Ctx::default();
    if root.as_map().is_none() {
        ctx.at(
            Rule::NotAMapping,
            root,
            "",
            format!("a manifest is a mapping, found {}", root.value.type_name()),
        );
        return ValidationReport {
            manifest: None,
            problems: ctx.problems,
        };
    }
    locate::duplicate_keys(&mut ctx, root, "");
    fields::check(&mut ctx, root);
    capabilities::check(&mut ctx, root);
    roles::check(&mut ctx, root);
    let tool_names = tools::check_tools(&mut ctx, root);
    tools::check_methods(&mut ctx, root, &tool_names);
    tools::check_notifications(&mut ctx, root);
    schemas::check(&mut ctx, root);
    knobs::check(&mut ctx, root);

    let manifest = match Manifest::from_node(root) {
        Ok(m) => Some(m),
        Err(e) => {
            // Every model constraint is also a rule above; this is a safety net.
            if !ctx.problems.iter().any(|p| p.severity == Severity::Error) {
                let pos = e.pos().unwrap_or(root.pos);
                ctx.at_pos(Rule::ModelMismatch, pos, "", e.to_string());
            }
            None
        }
    };
    let mut problems = ctx.problems;
    problems.sort_by_key(|p| (p.line.unwrap_or(usize::MAX), p.column.unwrap_or(usize::MAX)));
    ValidationReport { manifest, problems }
}
