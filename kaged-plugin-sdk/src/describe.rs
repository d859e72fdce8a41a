//! The manifest a plugin's code implies.
//!
//! Name, version, methods, hooks, roles, tools (with their schemas),
//! notifications and `config_schema` come from the code; what the code
//! cannot know (description, command, capabilities, knobs, timeouts, env,
//! author/license/homepage, `system_config_schema`) comes from a small base
//! file ([`crate::PluginBuilder::manifest_base`], usually
//! `kaged-plugin.base.yaml` next to `Cargo.toml`) or from builder methods
//! ([`crate::PluginBuilder::description`]...).
//!
//! This module works on plain data (a base, a manifest, what the code
//! declares); the runtime's `Plugin::manifest` feeds it a built plugin.
//! Every SDK plugin binary answers `--print-manifest` with the result; see
//! [`crate::testing`] for the test that keeps the checked-in
//! `kaged-plugin.yaml` current. The conformance profile the code implies
//! (`--print-profile`: per method, the schemas of its params and result)
//! is described at [`MethodSchemas`].
//!
//! ```
//! use kaged_plugin_sdk::{plugin, Call, PluginError};
//! let plugin = plugin!("echo")
//!     .manifest_base("description: Echoes.\ncommand: [./echo]\ncapabilities: []\n")
//!     .method("echo.say", |p: serde_json::Value, _c: Call| async move { Ok::<_, PluginError>(p) })
//!     .build()
//!     .unwrap();
//! let yaml = plugin.manifest_yaml();
//! assert!(yaml.contains("name: echo\n"));
//! assert!(yaml.contains("methods:\n  - echo.say\n"));
//! assert!(yaml.contains("command:\n  - ./echo\n"));
//! ```

mod base;
mod profile;

use serde_json::Value;

pub use base::{parse_base, BaseError, ManifestBase, CODE_DERIVED_FIELDS};
pub(crate) use profile::{profile_of, profile_yaml};
pub use profile::{MethodSchemas, ParamsSchema, PRINT_PROFILE_FLAG};

use crate::manifest::{CapabilityEntry, Manifest, ToolDecl};
use crate::protocol::{names, HookName, PluginRole, API_VERSION};
use crate::tool::ToolSpec;

pub use crate::protocol::manifest::PRINT_MANIFEST_FLAG;

/// What a plugin's code declares, as plain data: the input of
/// [`manifest_of`] (the runtime fills it from a built plugin).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Declared<'a> {
    pub name: &'a str,
    pub version: &'a str,
    /// Custom methods then prefixed tool names, as sent in `initialize`.
    pub methods: &'a [String],
    pub notifications: &'a [String],
    pub tools: &'a [ToolSpec],
    pub hooks: &'a [HookName],
    /// The roles as declared (none when only implied by hooks).
    pub roles: &'a [PluginRole],
    pub capabilities_used: &'a [String],
    pub config_schema: Option<&'a Value>,
}

/// The manifest `code` implies, merged with its `base` metadata: the
/// base's capabilities, then every capability used that the base lacks.
pub(crate) fn manifest_of(code: &Declared<'_>, base: &ManifestBase) -> Manifest {
    let tool_methods: Vec<String> = code
        .tools
        .iter()
        .map(|t| names::prefixed_tool_name(code.name, &t.name))
        .collect();
    let mut capabilities = base.capabilities.clone();
    for used in code.capabilities_used {
        if !capabilities.iter().any(|c| &c.canonical() == used) {
            capabilities.push(CapabilityEntry::Text(used.clone()));
        }
    }
    Manifest {
        name: code.name.to_string(),
        version: code.version.to_string(),
        kaged_api: i64::from(API_VERSION),
        description: base.description.clone().unwrap_or_default(),
        author: base.author.clone(),
        license: base.license.clone(),
        homepage: base.homepage.clone(),
        command: base.command.clone(),
        env: base.env.clone(),
        capabilities,
        roles: if code.roles.is_empty() {
            None
        } else {
            Some(code.roles.iter().map(|r| r.as_str().to_string()).collect())
        },
        hooks: HookName::ALL
            .iter()
            .filter(|h| code.hooks.contains(h))
            .map(|h| h.as_str().to_string())
            .collect(),
        tools: code
            .tools
            .iter()
            .map(|t| ToolDecl {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters_schema: t.parameters_schema.clone(),
            })
            .collect(),
        methods: code
            .methods
            .iter()
            .filter(|m| !tool_methods.contains(m))
            .cloned()
            .collect(),
        notifications: code.notifications.to_vec(),
        config_schema: code.config_schema.cloned(),
        system_config_schema: base.system_config_schema.clone(),
        knobs: base.knobs.clone(),
        shutdown_timeout_sec: base.shutdown_timeout_sec,
        health_interval_sec: base.health_interval_sec,
        hook_timeout_sec: base.hook_timeout_sec,
    }
}

/// `manifest` as YAML under a header comment naming the plugin: what
/// `--print-manifest` prints.
pub(crate) fn manifest_yaml(manifest: &Manifest) -> String {
    format!(
        "# kaged-plugin.yaml of `{}`, generated from its code by `{PRINT_MANIFEST_FLAG}`.\n{}",
        manifest.name,
        to_yaml(manifest)
    )
}

/// Render a manifest as YAML: keys in the spec's Full schema order,
/// deterministic quoting, two-space indentation.
///
/// ```
/// let m = kaged_plugin_sdk::manifest::Manifest::from_yaml_str(
///     "name: x\nversion: 0.1.0\nkaged_api: 1\ndescription: d\ncommand: [./x]\ncapabilities: []\n",
/// ).unwrap();
/// let text = kaged_plugin_sdk::describe::to_yaml(&m);
/// assert_eq!(text, "name: x\nversion: 0.1.0\nkaged_api: 1\ndescription: d\ncommand:\n  - ./x\ncapabilities: []\n");
/// ```
pub fn to_yaml(manifest: &Manifest) -> String {
    manifest.to_yaml()
}

/// Render any JSON value as YAML with the same rules as [`to_yaml`].
pub fn value_to_yaml(value: &Value) -> String {
    crate::manifest::value_to_yaml(value)
}

/// What a manifest still lacks before a host accepts it (no description,
/// no command). Empty when complete.
pub fn manifest_gaps(manifest: &Manifest) -> Vec<String> {
    let mut gaps = Vec::new();
    if manifest.description.trim().is_empty() {
        gaps.push(
            "no `description`: add one to the base file or call .description(..)".to_string(),
        );
    }
    if manifest.command.is_empty() {
        gaps.push("no `command`: add one to the base file or call .command([..])".to_string());
    }
    gaps
}
