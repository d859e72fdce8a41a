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
mod report;
mod roles;
mod rule;
mod schemas;
mod tools;

use std::path::Path;

use kaged_plugin_protocol::manifest::{parse_yaml, Manifest, YamlNode, MANIFEST_FILE};

pub use capabilities::{parse_capability, Capability, CapabilityError, PATH_URI_PREFIXES};
pub use fields::{command_leaves_plugin_dir, HOST_API_VERSION, TOP_LEVEL_KEYS};
pub use knob_types::KnobType;
pub use knob_value::{KnobBounds, KnobValueError};
pub use report::{Problem, ValidationReport};
pub use rule::{Rule, Severity};

use locate::Ctx;

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
