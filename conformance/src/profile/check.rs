//! The rules of a profile that need the manifest or a JSON Schema
//! validator: every entry names a custom method of the manifest and says
//! something; every schema compiles; params are objects; every example
//! satisfies `params_schema` (and its result `result_schema`); every
//! invalid call breaks `params_schema`; codes are error codes.

use jsonschema::{ValidationError, Validator};
use kaged_plugin_protocol::manifest::{locate, render_path, Manifest, PathSegment, YamlNode};
use kaged_plugin_protocol::profile::{MethodProfile, Profile};
use serde_json::Value;

/// A validation error as a detail: the message, and where in the value.
pub(super) fn describe(e: &ValidationError<'_>) -> String {
    let at = e.instance_path().to_string();
    if at.is_empty() {
        e.to_string()
    } else {
        format!("{e} (at {at})")
    }
}

/// Collects problems, each located in the YAML.
struct Problems<'a> {
    root: &'a YamlNode,
    out: Vec<String>,
}

impl Problems<'_> {
    fn push(&mut self, path: &[PathSegment], message: impl std::fmt::Display) {
        let node = locate(self.root, path);
        self.out
            .push(format!("{}: {}: {message}", node.pos, render_path(path)));
    }

    /// The validator of the schema at `path`, or a problem.
    fn compile(&mut self, path: &[PathSegment], schema: &Value) -> Option<Validator> {
        match jsonschema::validator_for(schema) {
            Ok(v) => Some(v),
            Err(e) => {
                self.push(path, format!("not a valid JSON Schema: {e}"));
                None
            }
        }
    }
}

fn key(k: &str) -> PathSegment {
    PathSegment::Key(k.to_string())
}

fn at(base: &[PathSegment], more: &[PathSegment]) -> Vec<PathSegment> {
    base.iter().chain(more).cloned().collect()
}

/// Every problem of `profile` (parsed from `root`) for the plugin of
/// `manifest`; empty when it checks.
pub(super) fn problems(root: &YamlNode, profile: &Profile, manifest: &Manifest) -> Vec<String> {
    let mut p = Problems {
        root,
        out: Vec::new(),
    };
    let customs: Vec<&String> = manifest
        .methods
        .iter()
        .filter(|m| !manifest.is_prefixed_tool(m))
        .collect();
    for (name, entry) in &profile.methods {
        let base = [key("methods"), key(name)];
        if manifest.is_prefixed_tool(name) {
            p.push(&base, "is a tool: the suite calls tools with arguments from their parameters_schema; a profile is for custom methods");
        } else if !customs.contains(&name) {
            let known: Vec<&str> = customs.iter().map(|m| m.as_str()).collect();
            p.push(
                &base,
                format!(
                    "not a method of kaged-plugin.yaml (its methods: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            );
        }
        if entry.is_empty() {
            p.push(
                &base,
                "says nothing: give examples, params_schema, result_schema or invalid",
            );
        }
        method(&mut p, &base, entry);
    }
    p.out
}

/// The rules of one method's entry.
fn method(p: &mut Problems<'_>, base: &[PathSegment], entry: &MethodProfile) {
    let params = entry
        .params_schema
        .as_ref()
        .and_then(|s| p.compile(&at(base, &[key("params_schema")]), s));
    let result = entry
        .result_schema
        .as_ref()
        .and_then(|s| p.compile(&at(base, &[key("result_schema")]), s));
    for (i, ex) in entry.examples.iter().enumerate() {
        let here = at(base, &[key("examples"), PathSegment::Index(i)]);
        let params_at = at(&here, &[key("params")]);
        if !ex.params.is_object() {
            p.push(
                &params_at,
                "must be a mapping: the params object (the host adds `_context`)",
            );
        } else if let Some(Err(e)) = params.as_ref().map(|v| v.validate(&ex.params)) {
            p.push(
                &params_at,
                format!("does not satisfy params_schema: {}", describe(&e)),
            );
        }
        let own = ex
            .result_schema
            .as_ref()
            .and_then(|s| p.compile(&at(&here, &[key("result_schema")]), s));
        let Some(expected) = &ex.result else { continue };
        for (v, what) in [
            (&result, "result_schema"),
            (&own, "the example's result_schema"),
        ] {
            if let Some(Err(e)) = v.as_ref().map(|v| v.validate(expected)) {
                p.push(
                    &at(&here, &[key("result")]),
                    format!("does not satisfy {what}: {}", describe(&e)),
                );
            }
        }
    }
    for (i, bad) in entry.invalid.iter().enumerate() {
        let here = at(base, &[key("invalid"), PathSegment::Index(i)]);
        if !bad.params.is_object() {
            p.push(
                &at(&here, &[key("params")]),
                "must be a mapping: the params object (the host adds `_context`)",
            );
        } else if params.as_ref().is_some_and(|v| v.is_valid(&bad.params)) {
            p.push(
                &at(&here, &[key("params")]),
                "satisfies params_schema: params the method must refuse cannot be params its schema accepts",
            );
        }
        if bad.code >= 0 {
            p.push(
                &at(&here, &[key("code")]),
                format!("{} is not an error code: JSON-RPC error codes are negative (-32602: invalid params)", bad.code),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kaged_plugin_protocol::manifest::parse_yaml;

    const MANIFEST: &str = "name: notes\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [./p]\ncapabilities: []\nmethods: [notes.add, notes.count]\ntools:\n  - name: shout\n    description: s\n    parameters_schema: {type: object}\n";

    fn problems_of(text: &str) -> Vec<String> {
        let manifest = Manifest::from_yaml_str(MANIFEST).expect("manifest");
        let root = parse_yaml(text).expect("yaml");
        let profile = Profile::from_node(&root).expect("profile");
        problems(&root, &profile, &manifest)
    }

    #[test]
    fn a_good_profile_has_no_problems() {
        let text = "profile: 1\nmethods:\n  notes.add:\n    params_schema: {type: object, properties: {text: {type: string}}, required: [text]}\n    result_schema: {type: object}\n    examples:\n      - params: {text: hi}\n        result: {added: 1}\n    invalid:\n      - params: {text: 5}\n        code: -32602\n";
        assert_eq!(problems_of(text), Vec::<String>::new());
    }

    #[test]
    fn every_problem_names_the_field_and_where_it_is() {
        let text = "\
profile: 1
methods:
  notes.gone:
    examples: [{params: {}}]
  notes.shout:
    examples: [{params: {}}]
  notes.count: {}
  notes.add:
    params_schema: {type: object, required: [text]}
    result_schema: {type: 7}
    examples:
      - params: {txt: hi}
      - params: [1]
    invalid:
      - params: {text: x}
        code: 12
";
        let got = problems_of(text);
        let want = [
            "line 10, column 20: methods.notes.add.result_schema: not a valid JSON Schema",
            "line 12, column 17: methods.notes.add.examples[0].params: does not satisfy params_schema: \"text\" is a required property",
            "line 13, column 17: methods.notes.add.examples[1].params: must be a mapping",
            "line 15, column 17: methods.notes.add.invalid[0].params: satisfies params_schema",
            "line 16, column 15: methods.notes.add.invalid[0].code: 12 is not an error code",
            "line 7, column 16: methods.notes.count: says nothing",
            "line 4, column 5: methods.notes.gone: not a method of kaged-plugin.yaml (its methods: notes.add, notes.count)",
            "line 6, column 5: methods.notes.shout: is a tool",
        ];
        assert_eq!(got.len(), want.len(), "{got:#?}");
        for (g, w) in got.iter().zip(want) {
            assert!(g.starts_with(w), "{g:?} should start with {w:?}");
        }
    }

    #[test]
    fn a_tool_is_not_a_method() {
        let got =
            problems_of("profile: 1\nmethods:\n  notes.shout:\n    examples: [{params: {}}]\n");
        // `notes.shout` is the prefixed name of the tool `shout`.
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].contains("is a tool"), "{got:?}");
    }
}
