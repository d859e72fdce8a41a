//! `#[method]` handlers put their Rust types in the conformance profile
//! (`Plugin::profile`, what `--print-profile` prints): a params type that
//! derives `JsonSchema` gives `params_schema` and its `#[schemars(example)]`s
//! the examples, a result type that derives it gives `result_schema`, a
//! handler without params is called with `{}`, and types without a schema
//! are left out without an error.

use kaged_plugin_sdk::{kaged_plugin, Call, PluginError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// `notes.add` params.
#[derive(Deserialize, JsonSchema)]
#[schemars(example = json!({"text": "buy milk"}))]
struct Add {
    /// The note.
    text: String,
}

/// `notes.add` answer.
#[derive(Serialize, JsonSchema)]
struct Added {
    count: usize,
}

/// Params without a schema.
#[derive(Deserialize)]
struct Opaque {
    #[allow(dead_code)]
    anything: String,
}

struct Notes;

#[kaged_plugin(name = "notes")]
impl Notes {
    #[method("notes.add")]
    async fn add(&self, p: Add) -> Result<Added, PluginError> {
        Ok(Added {
            count: p.text.len(),
        })
    }

    #[method("notes.count")]
    async fn count(&self, _call: Call) -> Result<usize, PluginError> {
        Ok(0)
    }

    #[method("notes.raw")]
    async fn raw(&self, p: Value) -> Result<Value, PluginError> {
        Ok(p)
    }

    #[method("notes.opaque")]
    async fn opaque(&self, _p: Opaque) -> Result<(), PluginError> {
        Ok(())
    }
}

#[test]
fn method_types_make_the_profile() {
    let plugin = Notes.plugin_builder().build().expect("valid");
    let profile = plugin.profile();
    assert_eq!(
        profile.methods.keys().collect::<Vec<_>>(),
        ["notes.add", "notes.count", "notes.opaque"],
        "notes.raw takes and answers any JSON: nothing to say"
    );
    let add = &profile.methods["notes.add"];
    assert_eq!(add.examples.len(), 1);
    assert_eq!(add.examples[0].params, json!({"text": "buy milk"}));
    let params = add.params_schema.as_ref().expect("a params schema");
    assert_eq!(params["required"], json!(["text"]));
    assert_eq!(params["properties"]["text"]["description"], "The note.");
    let result = add.result_schema.as_ref().expect("a result schema");
    assert_eq!(result["required"], json!(["count"]));

    let count = &profile.methods["notes.count"];
    assert_eq!(
        count.examples[0].params,
        json!({}),
        "no params: called with {{}}"
    );
    assert!(count.params_schema.is_none());
    assert_eq!(
        count.result_schema.as_ref().map(|s| &s["type"]),
        Some(&json!("integer"))
    );

    let opaque = &profile.methods["notes.opaque"];
    assert!(opaque.params_schema.is_none() && opaque.examples.is_empty());
    assert_eq!(opaque.result_schema, Some(json!({"type": "null"})));

    let yaml = plugin.profile_yaml();
    assert!(
        yaml.starts_with("# kaged-conformance.yaml of `notes`, generated from its code by `--print-profile`.\nprofile: 1\nmethods:\n  notes.add:\n"),
        "{yaml}"
    );
    let back = kaged_plugin_sdk::protocol::profile::Profile::from_yaml_str(&yaml).expect("parses");
    assert_eq!(back, profile);
}
