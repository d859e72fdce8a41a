//! The manifest a plugin's code implies.
//!
//! Name, version, methods, hooks, roles, tools (with their schemas),
//! notifications and `config_schema` come from the code; what the code
//! cannot know (description, command, capabilities, knobs, timeouts, env,
//! author/license/homepage, `system_config_schema`) comes from a small base
//! file ([`PluginBuilder::manifest_base`], usually `kaged-plugin.base.yaml`
//! next to `Cargo.toml`) or from builder methods ([`PluginBuilder::description`]...).
//!
//! Every SDK plugin binary answers `--print-manifest` with the result; see
//! [`crate::testing`] for the test that keeps the checked-in
//! `kaged-plugin.yaml` current.
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
mod emit;

use schemars::JsonSchema;
use serde_json::Value;

pub use base::{parse_base, BaseError, ManifestBase, CODE_DERIVED_FIELDS};

use crate::manifest::{CapabilityEntry, Knob, Manifest, ToolDecl};
use crate::protocol::{names, HookName, API_VERSION};
use crate::runtime::{Plugin, PluginBuilder};

/// The command-line flag every SDK plugin answers with its manifest.
pub const PRINT_MANIFEST_FLAG: &str = "--print-manifest";

/// The metadata a manifest needs beyond the code.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ManifestMeta {
    pub base: ManifestBase,
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
    match serde_json::to_value(manifest) {
        Ok(v) => emit::to_yaml(&v),
        // A Manifest is plain data: serializing it cannot fail.
        Err(e) => format!("# cannot serialize the manifest: {e}\n"),
    }
}

/// Render any JSON value as YAML with the same rules as [`to_yaml`].
pub fn value_to_yaml(value: &Value) -> String {
    emit::to_yaml(value)
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

impl Plugin {
    /// The `kaged-plugin.yaml` this plugin's code implies, merged with its
    /// base metadata.
    pub fn manifest(&self) -> Manifest {
        let def = &self.def;
        let base = &def.meta.base;
        let tool_methods: Vec<String> = def
            .tools
            .iter()
            .map(|t| names::prefixed_tool_name(&def.name, &t.name))
            .collect();
        let mut capabilities = base.capabilities.clone();
        for used in &def.capabilities_used {
            if !capabilities.iter().any(|c| &c.canonical() == used) {
                capabilities.push(CapabilityEntry::Text(used.clone()));
            }
        }
        Manifest {
            name: def.name.clone(),
            version: def.version.clone().unwrap_or_default(),
            kaged_api: i64::from(API_VERSION),
            description: base.description.clone().unwrap_or_default(),
            author: base.author.clone(),
            license: base.license.clone(),
            homepage: base.homepage.clone(),
            command: base.command.clone(),
            env: base.env.clone(),
            capabilities,
            roles: if def.roles.is_empty() {
                None
            } else {
                Some(def.roles.iter().map(|r| r.as_str().to_string()).collect())
            },
            hooks: HookName::ALL
                .iter()
                .filter(|h| def.hooks.contains(h))
                .map(|h| h.as_str().to_string())
                .collect(),
            tools: def
                .tools
                .iter()
                .map(|t| ToolDecl {
                    name: t.name.clone(),
                    description: t.description.clone(),
                    parameters_schema: t.parameters_schema.clone(),
                })
                .collect(),
            methods: def
                .methods
                .iter()
                .filter(|m| !tool_methods.contains(m))
                .cloned()
                .collect(),
            notifications: def.notifications.clone(),
            config_schema: def.config_schema.clone(),
            system_config_schema: base.system_config_schema.clone(),
            knobs: base.knobs.clone(),
            shutdown_timeout_sec: base.shutdown_timeout_sec,
            health_interval_sec: base.health_interval_sec,
            hook_timeout_sec: base.hook_timeout_sec,
        }
    }

    /// [`Plugin::manifest`] as YAML, with a header comment; what
    /// `--print-manifest` prints.
    pub fn manifest_yaml(&self) -> String {
        format!(
            "# kaged-plugin.yaml of `{}`, generated from its code by `{PRINT_MANIFEST_FLAG}`.\n{}",
            self.def.name,
            to_yaml(&self.manifest())
        )
    }

    /// Print [`Plugin::manifest_yaml`] on stdout and any
    /// [`manifest_gaps`] on stderr; the process exit code (0, or 1 when
    /// stdout cannot be written).
    pub(crate) fn print_manifest(&self) -> i32 {
        use std::io::Write;
        for gap in manifest_gaps(&self.manifest()) {
            eprintln!("warning: {gap}");
        }
        let mut out = std::io::stdout().lock();
        match out
            .write_all(self.manifest_yaml().as_bytes())
            .and_then(|()| out.flush())
        {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: cannot write the manifest: {e}");
                1
            }
        }
    }
}

/// Manifest metadata on the builder. Later calls win: a builder call after
/// [`PluginBuilder::manifest_base`] overrides what the base said for that
/// field, and a base merged later overrides the fields it sets.
impl PluginBuilder {
    /// Merge a base file's metadata (YAML text with only the fields the
    /// code cannot know; see [`ManifestBase`]). Usually
    /// `.manifest_base(include_str!("../kaged-plugin.base.yaml"))`. A base
    /// that does not parse, or that sets a field the code decides (`methods`,
    /// `tools`...), makes [`PluginBuilder::build`] fail.
    pub fn manifest_base(mut self, yaml: &str) -> Self {
        match parse_base(yaml) {
            Ok(base) => self.def.meta.base.merge(base),
            Err(e) => self.def.errors.push(format!("manifest base: {e}")),
        }
        self
    }

    /// The manifest's one-line `description`.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.def.meta.base.description = Some(description.into());
        self
    }

    /// The manifest's `author`.
    pub fn author(mut self, author: impl Into<String>) -> Self {
        self.def.meta.base.author = Some(author.into());
        self
    }

    /// The manifest's SPDX `license`.
    pub fn license(mut self, license: impl Into<String>) -> Self {
        self.def.meta.base.license = Some(license.into());
        self
    }

    /// The manifest's `homepage`.
    pub fn homepage(mut self, homepage: impl Into<String>) -> Self {
        self.def.meta.base.homepage = Some(homepage.into());
        self
    }

    /// The manifest's `command` (the argv the host spawns).
    pub fn command<I, S>(mut self, argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.def.meta.base.command = argv.into_iter().map(Into::into).collect();
        self
    }

    /// One `env` entry of the manifest.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.def.meta.base.env.insert(key.into(), value.into());
        self
    }

    /// A manifest capability (`kaged:storage:read`, `net:[]`...). Capabilities
    /// given to [`PluginBuilder::capability_used`] are added automatically.
    pub fn capability(mut self, capability: impl Into<String>) -> Self {
        let c = capability.into();
        if !self
            .def
            .meta
            .base
            .capabilities
            .iter()
            .any(|e| e.canonical() == c)
        {
            self.def
                .meta
                .base
                .capabilities
                .push(CapabilityEntry::Text(c));
        }
        self
    }

    /// The manifest's `system_config_schema`, from a type's `JsonSchema`.
    pub fn system_config<S: JsonSchema>(mut self) -> Self {
        self.def.meta.base.system_config_schema = Some(crate::tool::schema_for::<S>());
        self
    }

    /// A knob (kept in call order; a knob of the same name is replaced).
    pub fn knob(mut self, name: impl Into<String>, knob: Knob) -> Self {
        let name = name.into();
        let knobs = &mut self.def.meta.base.knobs;
        match knobs.iter_mut().find(|(k, _)| *k == name) {
            Some(slot) => slot.1 = knob,
            None => knobs.push((name, knob)),
        }
        self
    }

    /// `shutdown_timeout_sec` (host default 5, max 30).
    pub fn shutdown_timeout_sec(mut self, seconds: i64) -> Self {
        self.def.meta.base.shutdown_timeout_sec = Some(seconds);
        self
    }

    /// `health_interval_sec` (host default 30, 5 to 300).
    pub fn health_interval_sec(mut self, seconds: i64) -> Self {
        self.def.meta.base.health_interval_sec = Some(seconds);
        self
    }

    /// `hook_timeout_sec` (host default 10, max 60).
    pub fn hook_timeout_sec(mut self, seconds: i64) -> Self {
        self.def.meta.base.hook_timeout_sec = Some(seconds);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_base_fails_the_build_with_the_reason() {
        let err = crate::plugin!("x")
            .manifest_base("tools: []\n")
            .build()
            .err();
        let text = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("`tools` comes from the code"), "{text}");
    }

    #[test]
    fn builder_metadata_and_base_merge_in_call_order() {
        let plugin = crate::plugin!("x")
            .description("from the builder")
            .manifest_base("description: from the base\nlicense: MIT\ncapabilities: [\"net:[]\"]\n")
            .license("Apache-2.0")
            .capability_used("kaged:storage:read")
            .capability("net:[]")
            .build()
            .expect("valid");
        let m = plugin.manifest();
        assert_eq!(m.description, "from the base");
        assert_eq!(m.license.as_deref(), Some("Apache-2.0"));
        assert_eq!(m.capability_strings(), ["net:[]", "kaged:storage:read"]);
        assert_eq!(m.kaged_api, 1);
        assert!(m.roles.is_none() && m.hooks.is_empty());
        assert_eq!(
            manifest_gaps(&m),
            ["no `command`: add one to the base file or call .command([..])"]
        );
    }

    #[test]
    fn hook_and_role_names_match_the_protocol_types() {
        let hooks: Vec<&str> = HookName::ALL.iter().map(|h| h.as_str()).collect();
        assert_eq!(hooks, names::HOOK_NAMES);
        use crate::protocol::PluginRole;
        let roles = [
            PluginRole::Observer.as_str(),
            PluginRole::Compactor.as_str(),
        ];
        assert_eq!(roles, names::ROLE_NAMES);
    }
}
