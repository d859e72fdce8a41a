//! The conformance profile, `kaged-conformance.yaml`: what the manifest
//! cannot say about a plugin's custom methods (it lists them by name only),
//! written beside `kaged-plugin.yaml` for the conformance suite. Per method:
//! example params (and optionally the result each must answer), a JSON
//! Schema of the params and of the result, and params the method must
//! refuse with a given error code.
//!
//! ```yaml
//! profile: 1
//! methods:
//!   notes.add:
//!     params_schema: {type: object, properties: {text: {type: string}}, required: [text]}
//!     result_schema: {type: object, required: [added]}
//!     examples:
//!       - params: {text: buy milk}
//!         result: {added: 1}
//!     invalid:
//!       - params: {text: 5}
//!         code: -32602
//! ```
//!
//! This module is the model, its located loader ([`Profile::from_yaml_str`])
//! and its deterministic rendering ([`Profile::to_yaml`]); the rules that
//! need the manifest or a JSON Schema validator (methods declared, schemas
//! that compile, examples that satisfy them) are checked by the suite
//! (`kaged-conformance`, case `profile.valid`). SDK plugins generate it from
//! their Rust types (`--print-profile`).

mod load;

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

pub use load::ProfileError;

/// The profile's file name inside a plugin directory.
pub const PROFILE_FILE: &str = "kaged-conformance.yaml";

/// The profile format version this crate reads and writes (`profile: 1`).
pub const PROFILE_VERSION: u64 = 1;

/// The command-line flag every SDK plugin answers with its profile
/// (printed on stdout, the plugin not started).
pub const PRINT_PROFILE_FLAG: &str = "--print-profile";

/// A parsed `kaged-conformance.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The format version: [`PROFILE_VERSION`].
    pub profile: u64,
    /// What the suite calls each method with, by method name.
    #[serde(default)]
    pub methods: BTreeMap<String, MethodProfile>,
}

impl Default for Profile {
    fn default() -> Profile {
        Profile {
            profile: PROFILE_VERSION,
            methods: BTreeMap::new(),
        }
    }
}

/// What the suite calls one method with, and what it must answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MethodProfile {
    /// A JSON Schema of the params object (without `_context`): every
    /// example satisfies it, and the fuzzer generates params from it. With
    /// no examples, the suite calls the method once with params generated
    /// from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params_schema: Option<Value>,
    /// A JSON Schema every result of the method satisfies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_schema: Option<Value>,
    /// Calls the method must answer with a result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Example>,
    /// Calls the method must refuse with an error code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invalid: Vec<InvalidParams>,
}

/// One call the method must answer with a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Example {
    /// The params object (the host adds `_context`).
    pub params: Value,
    /// The result it must answer, exactly (`null` included); absent: any
    /// result.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub result: Option<Value>,
    /// A JSON Schema this example's result satisfies (besides the method's
    /// `result_schema`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_schema: Option<Value>,
    /// Who calls: the daemon (the default) or an agent run.
    #[serde(default, skip_serializing_if = "CallAs::is_daemon")]
    pub context: CallAs,
}

impl Example {
    /// An example calling with `params`, expecting any result, as the daemon.
    pub fn new(params: Value) -> Example {
        Example {
            params,
            result: None,
            result_schema: None,
            context: CallAs::Daemon,
        }
    }
}

/// One call the method must refuse.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InvalidParams {
    /// The params object (the host adds `_context`).
    pub params: Value,
    /// The error code it must answer (usually `-32602`, invalid params).
    pub code: i64,
    /// Who calls: the daemon (the default) or an agent run.
    #[serde(default, skip_serializing_if = "CallAs::is_daemon")]
    pub context: CallAs,
}

/// Whose call a profile entry is: its `_context`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallAs {
    /// A daemon-level call (`_context` without an agent), as the daemon
    /// calls custom methods.
    #[default]
    Daemon,
    /// An agent run's call (`_context` with project, agent and session),
    /// for methods that apply only to a project.
    Agent,
}

impl CallAs {
    /// Whether this is [`CallAs::Daemon`] (the default, not written).
    pub fn is_daemon(&self) -> bool {
        *self == CallAs::Daemon
    }
}

/// `Some(value)` for a field that is present, `null` included.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl MethodProfile {
    /// Whether the entry says nothing.
    pub fn is_empty(&self) -> bool {
        self.params_schema.is_none()
            && self.result_schema.is_none()
            && self.examples.is_empty()
            && self.invalid.is_empty()
    }
}
