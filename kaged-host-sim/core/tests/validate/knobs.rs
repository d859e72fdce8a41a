//! One failing and one passing manifest per knob and config-schema rule.
//!
//! Knob cases are written under a fixed `config_schema` /
//! `system_config_schema` prelude; their lines are relative to the first
//! line after `knobs:` (line 1 = the first knob's name).

use kaged_host_core::validate::{validate_str, Rule};

const BASE: &str = "name: demo-plugin\nversion: 1.0.0\nkaged_api: 1\ndescription: A demo plugin.\ncommand: [./run]\ncapabilities: []\n";
const BASE_LINES: usize = 6;

const CONFIG: &str = "config_schema:
  type: object
  properties:
    level: {type: string, enum: [low, high]}
    ratio: {type: number}
    count: {type: integer}
    flag: {type: boolean}
    note: {type: string}
    model: {type: [string, \"null\"]}
    store: {type: string}
system_config_schema:
  type: object
  properties:
    token: {type: string}
knobs:
";
const CONFIG_LINES: usize = 15;

/// `bad` reports `rule` at `path` on snippet line `line`; `good` has no
/// error and no finding of `rule`.
fn check(rule: Rule, path: &str, line: usize, bad: &str, good: &str) {
    let text = format!("{BASE}{bad}");
    let r = validate_str(&text);
    assert!(
        r.problems
            .iter()
            .any(|p| p.rule == rule && p.path == path && p.line == Some(BASE_LINES + line)),
        "expected {rule} at `{path}` line {}\n--- manifest\n{text}\n--- report\n{}",
        BASE_LINES + line,
        r.render_human()
    );
    let text = format!("{BASE}{good}");
    let r = validate_str(&text);
    assert!(
        !r.has_errors() && r.problems_of(rule).next().is_none(),
        "passing case for {rule} reported problems\n--- manifest\n{text}\n--- report\n{}",
        r.render_human()
    );
}

/// Knob `body` (after `knobs:`) under the config prelude.
fn knobs(body: &str) -> String {
    format!("{CONFIG}{body}")
}

/// A knob named `k` with these fields (one per line).
fn k(fields: &[&str]) -> String {
    named("k", fields)
}

fn named(name: &str, fields: &[&str]) -> String {
    let mut s = format!("  {name}:\n");
    for f in fields {
        s.push_str(&format!("    {f}\n"));
    }
    s
}

macro_rules! knob_case {
    ($test:ident: $rule:ident at $path:literal line $line:literal, bad $bad:expr, good $good:expr) => {
        #[test]
        fn $test() {
            check(
                Rule::$rule,
                $path,
                CONFIG_LINES + $line,
                &knobs(&$bad),
                &knobs(&$good),
            );
        }
    };
}

macro_rules! case {
    ($test:ident: $rule:ident at $path:literal line $line:literal, bad $bad:expr, good $good:expr) => {
        #[test]
        fn $test() {
            check(Rule::$rule, $path, $line, &$bad, &$good);
        }
    };
}

const FLAG: [&str; 4] = [
    "type: boolean",
    "label: Flag",
    "default: true",
    "binds_to: config.flag",
];
const RATIO: [&str; 7] = [
    "type: range",
    "label: Ratio",
    "min: 0",
    "max: 1",
    "step: 0.1",
    "default: 0.5",
    "binds_to: config.ratio",
];
const LEVEL: [&str; 5] = [
    "type: enum",
    "label: Level",
    "values: [low, high]",
    "default: low",
    "binds_to: config.level",
];
const STORE: [&str; 5] = [
    "type: path",
    "label: Store",
    "prefixes: [\"config:\", \"project:\"]",
    "default: \"config:/memory\"",
    "binds_to: config.store",
];

fn with(base: &[&str], replace: &str, by: &str) -> Vec<String> {
    base.iter()
        .map(|l| {
            if l.starts_with(replace) {
                by.to_owned()
            } else {
                (*l).to_owned()
            }
        })
        .collect()
}
fn kv(fields: &[String]) -> String {
    k(&fields.iter().map(String::as_str).collect::<Vec<_>>())
}

// --- common fields ---
knob_case!(knob_name_format: KnobNameFormat at "knobs.Bad-Name" line 1, bad named("Bad-Name", &FLAG), good named("good_name_2", &FLAG));
knob_case!(knob_type_missing: MissingField at "knobs.k.type" line 2, bad k(&FLAG[1..]), good k(&FLAG));
knob_case!(knob_type_unknown: KnobTypeUnknown at "knobs.k.type" line 2, bad kv(&with(&FLAG, "type", "type: toggle")), good k(&FLAG));
knob_case!(knob_label_missing: MissingField at "knobs.k.label" line 2, bad kv(&with(&FLAG, "label", "")), good k(&FLAG));
knob_case!(knob_label_too_long: KnobLabel at "knobs.k.label" line 3,
    bad kv(&with(&FLAG, "label", &format!("label: {}", "l".repeat(65)))), good kv(&with(&FLAG, "label", &format!("label: {}", "l".repeat(64)))));
knob_case!(knob_description_too_long: KnobDescriptionTooLong at "knobs.k.description" line 6,
    bad k(&[FLAG[0], FLAG[1], FLAG[2], FLAG[3], &format!("description: {}", "d".repeat(281))]),
    good k(&[FLAG[0], FLAG[1], FLAG[2], FLAG[3], &format!("description: {}", "d".repeat(280))]));
knob_case!(knob_unknown_field: KnobUnknownField at "knobs.k.values" line 6,
    bad k(&[FLAG[0], FLAG[1], FLAG[2], FLAG[3], "values: [a]"]), good k(&FLAG));

// --- binds_to ---
knob_case!(binds_to_missing: MissingField at "knobs.k.binds_to" line 2, bad k(&FLAG[..3]), good k(&FLAG));
knob_case!(binds_to_format: KnobBindsToFormat at "knobs.k.binds_to" line 5, bad kv(&with(&FLAG, "binds_to", "binds_to: flag")), good k(&FLAG));
knob_case!(binds_to_nested: KnobBindsToFormat at "knobs.k.binds_to" line 5, bad kv(&with(&FLAG, "binds_to", "binds_to: config.flag.on")), good k(&FLAG));
knob_case!(binds_to_unknown_field: KnobBindsToUnknownField at "knobs.k.binds_to" line 5,
    bad kv(&with(&FLAG, "binds_to", "binds_to: config.missing")), good k(&FLAG));
knob_case!(binds_to_system_field: KnobBindsToSystemConfig at "knobs.k.binds_to" line 5,
    bad kv(&with(&FLAG, "binds_to", "binds_to: config.token")), good k(&FLAG));
knob_case!(binds_to_system_path: KnobBindsToSystemConfig at "knobs.k.binds_to" line 5,
    bad kv(&with(&FLAG, "binds_to", "binds_to: system_config.token")), good k(&FLAG));
knob_case!(binds_to_duplicate: KnobBindsToDuplicate at "knobs.b.binds_to" line 10,
    bad format!("{}{}", named("a", &FLAG), named("b", &FLAG)), good format!("{}{}", named("a", &FLAG), named("b", &RATIO)));
knob_case!(knob_type_mismatch: KnobSchemaMismatch at "knobs.k.binds_to" line 5,
    bad kv(&with(&FLAG, "binds_to", "binds_to: config.note")), good k(&FLAG));
knob_case!(knob_range_mismatch: KnobSchemaMismatch at "knobs.k.binds_to" line 8,
    bad kv(&with(&RATIO, "binds_to", "binds_to: config.note")), good kv(&with(&RATIO, "binds_to", "binds_to: config.count")));
knob_case!(knob_enum_mismatch: KnobSchemaMismatch at "knobs.k.binds_to" line 6,
    bad kv(&with(&LEVEL, "values", "values: [low, mid, high]")), good k(&LEVEL));

// --- range / int_range ---
knob_case!(range_missing_step: MissingField at "knobs.k.step" line 2, bad kv(&with(&RATIO, "step", "")), good k(&RATIO));
knob_case!(range_min_above_max: KnobBounds at "knobs.k.max" line 5, bad kv(&with(&RATIO, "min", "min: 2")), good kv(&with(&RATIO, "min", "min: 0.5")));
knob_case!(range_step_zero: KnobBounds at "knobs.k.step" line 6, bad kv(&with(&RATIO, "step", "step: 0")), good k(&RATIO));
knob_case!(range_default_out: KnobDefaultOutOfRange at "knobs.k.default" line 7,
    bad kv(&with(&RATIO, "default", "default: 1.5")), good kv(&with(&RATIO, "default", "default: 1")));
knob_case!(range_number_type: WrongType at "knobs.k.min" line 4, bad kv(&with(&RATIO, "min", "min: low")), good k(&RATIO));
knob_case!(int_range_integer_type: WrongType at "knobs.k.default" line 7,
    bad k(&["type: int_range", "label: N", "min: 1", "max: 20", "step: 1", "default: 2.5", "binds_to: config.count"]),
    good k(&["type: int_range", "label: N", "min: 1", "max: 20", "step: 1", "default: 3", "binds_to: config.count"]));

// --- enum ---
knob_case!(enum_missing_values: MissingField at "knobs.k.values" line 2, bad kv(&with(&LEVEL, "values", "")), good k(&LEVEL));
knob_case!(enum_values_empty: KnobEnumValues at "knobs.k.values" line 4, bad kv(&with(&LEVEL, "values", "values: []")), good k(&LEVEL));
knob_case!(enum_values_repeated: KnobEnumValues at "knobs.k.values[2]" line 4, bad kv(&with(&LEVEL, "values", "values: [low, high, low]")), good k(&LEVEL));
knob_case!(enum_default_not_in_values: KnobDefaultNotInValues at "knobs.k.default" line 5, bad kv(&with(&LEVEL, "default", "default: mid")), good k(&LEVEL));
knob_case!(enum_labels_unknown_value: KnobLabelsUnknownValue at "knobs.k.labels.mid" line 8,
    bad k(&[LEVEL[0], LEVEL[1], LEVEL[2], LEVEL[3], LEVEL[4], "labels:", "  mid: Mid"]),
    good k(&[LEVEL[0], LEVEL[1], LEVEL[2], LEVEL[3], LEVEL[4], "labels:", "  low: Low", "  high: High"]));

// --- boolean ---
knob_case!(boolean_default_type: WrongType at "knobs.k.default" line 4, bad kv(&with(&FLAG, "default", "default: yes")), good kv(&with(&FLAG, "default", "default: false")));

// --- text / multiline ---
const NOTE: [&str; 4] = [
    "type: text",
    "label: Note",
    "default: abc",
    "binds_to: config.note",
];
fn note(extra: &[&str]) -> String {
    let mut f = NOTE.to_vec();
    f.extend_from_slice(extra);
    k(&f)
}
knob_case!(text_max_length_negative: KnobBounds at "knobs.k.max_length" line 6, bad note(&["max_length: -1"]), good note(&["max_length: 3"]));
knob_case!(text_default_too_long: KnobDefaultOutOfRange at "knobs.k.default" line 4, bad note(&["max_length: 2"]), good note(&["max_length: 10"]));
knob_case!(text_pattern_invalid: KnobPattern at "knobs.k.pattern" line 6, bad note(&["pattern: \"([a-z\""]), good note(&["pattern: \"^[a-z]+$\""]));
knob_case!(text_default_not_matching: KnobDefaultOutOfRange at "knobs.k.default" line 4, bad note(&["pattern: \"^[0-9]+$\""]), good note(&["pattern: \"^[a-c]+$\""]));
knob_case!(multiline_default_type: WrongType at "knobs.k.default" line 4,
    bad k(&["type: multiline", "label: M", "default: 5", "binds_to: config.note"]),
    good k(&["type: multiline", "label: M", "default: \"5\"", "max_length: 1", "binds_to: config.note"]));

// --- model_alias ---
const MODEL: [&str; 5] = [
    "type: model_alias",
    "label: Model",
    "filter: reasoning",
    "default: null",
    "binds_to: config.model",
];
knob_case!(model_alias_filter: KnobFilter at "knobs.k.filter" line 4, bad kv(&with(&MODEL, "filter", "filter: smart")), good kv(&with(&MODEL, "filter", "filter: fast")));
knob_case!(model_alias_default_type: WrongType at "knobs.k.default" line 5, bad kv(&with(&MODEL, "default", "default: 5")), good kv(&with(&MODEL, "default", "default: opus")));
knob_case!(model_alias_default_required: MissingField at "knobs.k.default" line 2, bad kv(&with(&MODEL, "default", "")), good k(&MODEL));

// --- path ---
knob_case!(path_prefixes_required: MissingField at "knobs.k.prefixes" line 2, bad kv(&with(&STORE, "prefixes", "")), good k(&STORE));
knob_case!(path_prefixes_unknown: KnobPrefixes at "knobs.k.prefixes[1]" line 4,
    bad kv(&with(&STORE, "prefixes", "prefixes: [\"config:\", \"home:\"]")), good kv(&with(&STORE, "prefixes", "prefixes: [\"config:\"]")));
knob_case!(path_prefixes_empty: KnobPrefixes at "knobs.k.prefixes" line 4, bad kv(&with(&STORE, "prefixes", "prefixes: []")), good k(&STORE));
knob_case!(path_default_prefix: KnobPathDefault at "knobs.k.default" line 5,
    bad kv(&with(&STORE, "default", "default: /var/memory")), good kv(&with(&STORE, "default", "default: \"project:/memory\"")));
knob_case!(path_must_exist_type: WrongType at "knobs.k.must_exist" line 7,
    bad k(&[STORE[0], STORE[1], STORE[2], STORE[3], STORE[4], "must_exist: maybe"]),
    good k(&[STORE[0], STORE[1], STORE[2], STORE[3], STORE[4], "must_exist: true"]));

// --- config schemas ---
const OBJ: &str = "config_schema:\n  type: object\n  properties:\n    a:\n      type: string\n";
case!(config_schema_invalid: ConfigSchemaInvalid at "config_schema.properties.a.type" line 5,
    bad "config_schema:\n  type: object\n  properties:\n    a:\n      type: text\n", good OBJ);
case!(config_schema_not_object: ConfigSchemaNotObject at "config_schema.type" line 2,
    bad "config_schema:\n  type: array\n", good OBJ);
case!(system_config_schema_not_mapping: ConfigSchemaNotObject at "system_config_schema" line 1,
    bad "system_config_schema: [api_token]\n", good "system_config_schema:\n  type: object\n  properties: {}\n");
case!(system_config_schema_invalid: ConfigSchemaInvalid at "system_config_schema.required" line 3,
    bad "system_config_schema:\n  type: object\n  required: api_token\n", good "system_config_schema:\n  type: object\n  required: [api_token]\n");
case!(config_schema_overlap: ConfigSchemaOverlap at "system_config_schema.properties.a" line 9,
    bad format!("{OBJ}system_config_schema:\n  type: object\n  properties:\n    a:\n      type: string\n"),
    good format!("{OBJ}system_config_schema:\n  type: object\n  properties:\n    b:\n      type: string\n"));

// A block mapping is located at its first entry.
case!(config_schema_unknown_meta_schema: ConfigSchemaInvalid at "config_schema" line 2,
    bad "config_schema:\n  $schema: \"https://example.invalid/my-meta\"\n  type: object\n",
    good "config_schema:\n  $schema: \"http://json-schema.org/draft-07/schema#\"\n  type: object\n");

knob_case!(multiline_has_no_pattern: KnobUnknownField at "knobs.k.pattern" line 5,
    bad k(&["type: multiline", "label: M", "default: x", "pattern: \"(\"", "binds_to: config.note"]),
    good k(&["type: multiline", "label: M", "default: x", "binds_to: config.note"]));
