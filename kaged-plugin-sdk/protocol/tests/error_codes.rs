//! The error-code table against the spec's own text: `fixtures/spec-text/
//! error-codes.txt` is plugin-host.md's "Error codes" section, copied as it
//! is, so a code, a name or a meaning that drifts from the spec fails here.

use kaged_plugin_protocol::ErrorCode;

const SPEC: &str = include_str!("fixtures/spec-text/error-codes.txt");

/// The name as the spec's table writes it: the standard codes in words
/// (`Parse error`), the kaged codes in snake case (`not_initialized`).
fn spec_name(code: ErrorCode) -> String {
    if code.code() > -32100 {
        return code.name().to_string();
    }
    let words = code.name().replace('_', " ");
    let mut chars = words.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

#[test]
fn every_code_name_and_meaning_is_the_spec_table_in_its_order() {
    let rows: Vec<&str> = SPEC.lines().filter(|l| l.starts_with("-32")).collect();
    assert_eq!(rows.len(), ErrorCode::ALL.len(), "{rows:#?}");
    for (row, code) in rows.iter().zip(ErrorCode::ALL) {
        let ours = format!("{} {} {}", code.code(), spec_name(code), code.meaning());
        assert_eq!(*row, ours, "{code:?}");
    }
}

#[test]
fn the_plugin_domain_range_is_the_spec_sentence() {
    assert!(SPEC.contains(
        "Plugins may use codes in the range -32000 to -32099 for domain-specific errors."
    ));
    assert!(ErrorCode::is_plugin_range(-32000) && ErrorCode::is_plugin_range(-32099));
    assert!(!ErrorCode::is_plugin_range(-31999) && !ErrorCode::is_plugin_range(-32100));
}
