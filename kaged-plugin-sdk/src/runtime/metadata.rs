//! The manifest side of a plugin: metadata on the builder (description,
//! command, capabilities, knobs...; what the code cannot know), and the
//! manifest a built plugin implies ([`Plugin::manifest`], rendered by
//! [`crate::describe`] from plain data).

use schemars::JsonSchema;

use super::builder::{Plugin, PluginBuilder};
use crate::describe::{self, manifest_gaps, parse_base, Declared};
use crate::manifest::{CapabilityEntry, Knob, Manifest};
use crate::tool::schema_for;

impl Plugin {
    /// The `kaged-plugin.yaml` this plugin's code implies, merged with its
    /// base metadata.
    pub fn manifest(&self) -> Manifest {
        let def = &self.def;
        let code = Declared {
            name: &def.name,
            version: def.version.as_deref().unwrap_or_default(),
            methods: &def.methods,
            notifications: &def.notifications,
            tools: &def.tools,
            hooks: &def.hooks,
            roles: &def.roles,
            capabilities_used: &def.capabilities_used,
            config_schema: def.config_schema.as_ref(),
        };
        describe::manifest_of(&code, &def.base)
    }

    /// [`Plugin::manifest`] as YAML, with a header comment; what
    /// `--print-manifest` prints.
    pub fn manifest_yaml(&self) -> String {
        describe::manifest_yaml(&self.manifest())
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
    /// code cannot know; see [`crate::describe::ManifestBase`]). Usually
    /// `.manifest_base(include_str!("../kaged-plugin.base.yaml"))`. A base
    /// that does not parse, or that sets a field the code decides (`methods`,
    /// `tools`...), makes [`PluginBuilder::build`] fail.
    pub fn manifest_base(mut self, yaml: &str) -> Self {
        match parse_base(yaml) {
            Ok(base) => self.def.base.merge(base),
            Err(e) => self.def.errors.push(format!("manifest base: {e}")),
        }
        self
    }

    /// The manifest's one-line `description`.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.def.base.description = Some(description.into());
        self
    }

    /// The manifest's `author`.
    pub fn author(mut self, author: impl Into<String>) -> Self {
        self.def.base.author = Some(author.into());
        self
    }

    /// The manifest's SPDX `license`.
    pub fn license(mut self, license: impl Into<String>) -> Self {
        self.def.base.license = Some(license.into());
        self
    }

    /// The manifest's `homepage`.
    pub fn homepage(mut self, homepage: impl Into<String>) -> Self {
        self.def.base.homepage = Some(homepage.into());
        self
    }

    /// The manifest's `command` (the argv the host spawns).
    pub fn command<I, S>(mut self, argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.def.base.command = argv.into_iter().map(Into::into).collect();
        self
    }

    /// One `env` entry of the manifest.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.def.base.env.insert(key.into(), value.into());
        self
    }

    /// A manifest capability: a string (`"net:[]"`) or a typed
    /// [`Capability`](crate::protocol::capability::Capability)
    /// (`Capability::StorageRead`). Capabilities given to
    /// [`PluginBuilder::capability_used`] are added automatically.
    pub fn capability(mut self, capability: impl Into<String>) -> Self {
        let c = capability.into();
        let capabilities = &mut self.def.base.capabilities;
        if !capabilities.iter().any(|e| e.canonical() == c) {
            capabilities.push(CapabilityEntry::Text(c));
        }
        self
    }

    /// The manifest's `system_config_schema`, from a type's `JsonSchema`.
    pub fn system_config<S: JsonSchema>(mut self) -> Self {
        self.def.base.system_config_schema = Some(schema_for::<S>());
        self
    }

    /// A knob (kept in call order; a knob of the same name is replaced).
    pub fn knob(mut self, name: impl Into<String>, knob: Knob) -> Self {
        let name = name.into();
        let knobs = &mut self.def.base.knobs;
        match knobs.iter_mut().find(|(k, _)| *k == name) {
            Some(slot) => slot.1 = knob,
            None => knobs.push((name, knob)),
        }
        self
    }

    /// `shutdown_timeout_sec` (host default 5, max 30).
    pub fn shutdown_timeout_sec(mut self, seconds: i64) -> Self {
        self.def.base.shutdown_timeout_sec = Some(seconds);
        self
    }

    /// `health_interval_sec` (host default 30, 5 to 300).
    pub fn health_interval_sec(mut self, seconds: i64) -> Self {
        self.def.base.health_interval_sec = Some(seconds);
        self
    }

    /// `hook_timeout_sec` (host default 10, max 60).
    pub fn hook_timeout_sec(mut self, seconds: i64) -> Self {
        self.def.base.hook_timeout_sec = Some(seconds);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::capability::Capability;

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
            .capability_used(Capability::StorageRead)
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
}
