//! Arbitrary YAML-ish input never panics the parser or the validator, and
//! every report keeps its invariants.

use kaged_host_core::validate::{validate_str, Rule, Severity};
use kaged_plugin_protocol::manifest::Manifest;
use proptest::prelude::*;

/// Fragments that steer random text towards manifest-shaped YAML.
const FRAGMENTS: &[&str] = &[
    "name: ",
    "version: ",
    "kaged_api: ",
    "description: ",
    "command: ",
    "capabilities:",
    "roles:",
    "hooks:",
    "tools:",
    "methods:",
    "notifications:",
    "config_schema:",
    "system_config_schema:",
    "knobs:",
    "env:",
    "shutdown_timeout_sec: ",
    "type: ",
    "properties:",
    "binds_to: ",
    "values: ",
    "default: ",
    "min: ",
    "max: ",
    "step: ",
    "parameters_schema:",
    "- ",
    "  ",
    "    ",
    "\n",
    ": ",
    "[",
    "]",
    "{",
    "}",
    ",",
    "\"",
    "'",
    "#",
    "&a ",
    "*a",
    "<<: ",
    "!tag ",
    "|",
    ">-",
    "~",
    "null",
    "true",
    "yes",
    "1",
    "-1",
    "0.5",
    "1e999",
    ".nan",
    "65536",
    "net:[]",
    "net: []",
    "net:*",
    "read:fs:/x",
    "config:/",
    "exec:b:/p",
    "observer",
    "compactor",
    "pre_compact",
    "config.x",
    "object",
    "enum",
    "range",
    "path",
    "a.b",
    "kaged.x",
    "é",
    "\t",
    "---\n",
    "...\n",
];

fn yamlish() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            prop::sample::select(FRAGMENTS).prop_map(str::to_owned),
            "[a-z_.:/ -]{0,8}",
        ],
        0..60,
    )
    .prop_map(|parts| parts.concat())
}

fn check_invariants(text: &str) -> Result<(), TestCaseError> {
    let _ = Manifest::from_yaml_str(text);
    let report = validate_str(text);
    let _ = report.render_human();
    for p in &report.problems {
        prop_assert_eq!(p.severity, p.rule.severity());
        // Every rule finding is located; a syntax error is located whenever
        // the parser knows where (checked deterministically in
        // examples.rs).
        if p.rule != Rule::YamlSyntax {
            prop_assert!(p.line.is_some() && p.column.is_some(), "unlocated: {:?}", p);
        }
        prop_assert!(!p.message.is_empty());
    }
    if report.problems.iter().any(|p| p.rule == Rule::YamlSyntax) {
        prop_assert_eq!(report.problems.len(), 1);
    }
    prop_assert!(
        report.problems_of(Rule::ModelMismatch).next().is_none(),
        "validator gap:\n{}\n{}",
        text,
        report.render_human()
    );
    if !report.has_errors() {
        prop_assert!(report.manifest.is_some(), "valid but no model:\n{}", text);
    }
    let sorted = report
        .problems
        .windows(2)
        .all(|w| (w[0].line, w[0].column) <= (w[1].line, w[1].column));
    prop_assert!(sorted, "problems in document order");
    prop_assert_eq!(
        report.has_errors(),
        report
            .problems
            .iter()
            .any(|p| p.severity == Severity::Error)
    );
    Ok(())
}

fn full_schema() -> String {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../kaged-plugin-sdk/protocol/tests/fixtures/spec/full-schema.yaml");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        check_invariants(&text)?;
    }

    #[test]
    fn yamlish_text_never_panics(text in yamlish()) {
        check_invariants(&text)?;
    }

    #[test]
    fn a_valid_manifest_with_a_random_field_never_panics(
        key in prop::sample::select(FRAGMENTS),
        value in yamlish(),
    ) {
        let text = format!(
            "name: demo\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [x]\ncapabilities: []\n{key}{value}\n"
        );
        check_invariants(&text)?;
    }

    #[test]
    fn the_full_schema_example_with_an_insertion_never_panics(
        at in 0usize..4000,
        fragment in yamlish(),
    ) {
        let mut text = full_schema();
        let mut at = at % (text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.insert_str(at, &fragment);
        check_invariants(&text)?;
    }
}
