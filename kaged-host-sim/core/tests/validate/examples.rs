//! The spec's example manifests validate; a manifest with several errors
//! reports them all; YAML syntax errors and unreadable files are one error.

use std::path::PathBuf;

use kaged_host_core::validate::{validate_str, Rule, Severity};
use kaged_host_core::validate_dir;

fn spec_fixture(name: &str) -> String {
    // Shared with the SDK's parse tests (copies of the spec's examples).
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../kaged-plugin-sdk/protocol/tests/fixtures/spec")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn local_fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/manifests")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn assert_spotless(name: &str) {
    let report = validate_str(&spec_fixture(name));
    assert!(
        report.problems.is_empty(),
        "{name}:\n{}",
        report.render_human()
    );
    assert!(report.manifest.is_some(), "{name}: manifest model built");
    assert_eq!(report.render_human(), "", "a clean report renders empty");
}

#[test]
fn full_schema_example_is_valid_without_warnings() {
    assert_spotless("full-schema.yaml");
}

#[test]
fn oh_my_pi_example_is_valid_without_warnings() {
    assert_spotless("oh-my-pi.yaml");
}

#[test]
fn shell_adapter_example_is_valid_without_warnings() {
    assert_spotless("my-simple-adapter.yaml");
}

#[test]
fn config_and_knob_snippets_are_valid_without_warnings() {
    assert_spotless("memory-hindsight.yaml");
}

#[test]
fn validate_dir_reads_kaged_plugin_yaml() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("kaged-plugin.yaml"),
        spec_fixture("oh-my-pi.yaml"),
    )
    .expect("write");
    let report = validate_dir(dir.path());
    assert!(!report.has_errors(), "{}", report.render_human());
    assert_eq!(
        report.manifest.as_ref().map(|m| m.name.as_str()),
        Some("oh-my-pi")
    );
}

#[test]
fn validate_dir_without_manifest_is_one_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = validate_dir(dir.path());
    assert_eq!(report.problems.len(), 1);
    assert_eq!(report.problems[0].rule, Rule::ManifestUnreadable);
    assert!(report.manifest.is_none());
}

#[test]
fn three_different_errors_are_all_reported() {
    let report = validate_str(&local_fixture("three-errors.yaml"));
    let found: Vec<(Rule, &str, Option<usize>)> = report
        .errors()
        .map(|p| (p.rule, p.path.as_str(), p.line))
        .collect();
    assert_eq!(
        found,
        [
            (Rule::NameFormat, "name", Some(2)),
            (Rule::CapabilityNetPort, "capabilities[1]", Some(9)),
            (Rule::HookUnknown, "hooks[0]", Some(11)),
        ],
        "{}",
        report.render_human()
    );
    assert_eq!(report.warnings().count(), 0);
}

#[test]
fn errors_and_warnings_are_kept_apart() {
    let report = validate_str(&local_fixture("errors-and-warnings.yaml"));
    let errors: Vec<Rule> = report.errors().map(|p| p.rule).collect();
    let warnings: Vec<Rule> = report.warnings().map(|p| p.rule).collect();
    assert_eq!(errors, [Rule::VersionSemver, Rule::UnknownKey]);
    assert_eq!(
        warnings,
        [Rule::NameBuiltinNamespace, Rule::CapabilityDuplicate]
    );
    assert!(report.errors().all(|p| p.severity == Severity::Error));
    assert!(report.warnings().all(|p| p.severity == Severity::Warning));
    let human = report.render_human();
    let first_warning = human.find("warning[").expect("warnings rendered");
    let last_error = human.rfind("error[").expect("errors rendered");
    assert!(
        last_error < first_warning,
        "errors before warnings:\n{human}"
    );
    assert!(
        human.contains("error[version_semver] 3:10 version: "),
        "{human}"
    );
    assert!(human.ends_with("2 error(s), 2 warning(s)"), "{human}");
}

#[test]
fn warnings_alone_keep_the_manifest_valid() {
    let report = validate_str(
        &local_fixture("errors-and-warnings.yaml")
            .replace("version: latest", "version: 2.0.0")
            .replace("colour: blue\n", ""),
    );
    assert!(!report.has_errors(), "{}", report.render_human());
    assert_eq!(report.warnings().count(), 2);
    assert!(report.manifest.is_some());
}

#[test]
fn yaml_syntax_error_is_one_located_error() {
    let report = validate_str("name: demo\ncommand: [a, b\ncapabilities: []\nfoo: [\n");
    assert_eq!(report.problems.len(), 1, "{}", report.render_human());
    let p = &report.problems[0];
    assert_eq!(p.rule, Rule::YamlSyntax);
    assert_eq!(p.path, "");
    assert!(p.line.is_some_and(|l| l >= 2), "{p:?}");
    assert!(p.column.is_some());
    assert!(report.manifest.is_none());
}

#[test]
fn a_non_mapping_document_is_one_error() {
    let report = validate_str("- just\n- a list\n");
    assert_eq!(report.problems.len(), 1);
    assert_eq!(report.problems[0].rule, Rule::NotAMapping);
    assert_eq!(report.problems[0].line, Some(1));
}

#[test]
fn rule_ids_are_unique_and_round_trip() {
    for (i, rule) in Rule::ALL.iter().enumerate() {
        assert_eq!(Rule::from_id(rule.as_str()), Some(*rule));
        assert!(
            Rule::ALL[..i].iter().all(|r| r.as_str() != rule.as_str()),
            "duplicate id {rule}"
        );
        assert!(rule
            .as_str()
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_'));
    }
    assert_eq!(
        Rule::KnobBindsToSystemConfig.as_str(),
        "knob_binds_to_system_config"
    );
}
