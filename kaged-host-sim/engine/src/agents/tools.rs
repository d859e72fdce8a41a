//! The per-agent plugin tool registry (§ Plugin tool naming).
//!
//! Tools are registered per agent (an agent's resolved tool set), under
//! `<plugin>.<tool>`. A plugin is loaded all-or-nothing: when any of its
//! tools has an invalid registered name, or collides with a tool of a plugin
//! loaded earlier **on the same agent**, none of its tools are registered
//! and the plugin is not active on that agent. The same plugin declared on
//! two agents registers its tools on both: that is not a collision.
//!
//! Collisions are checked on every tool a loaded plugin provides, before the
//! agent's `tools:` opt-outs: an opt-out hides a tool from the agent, it does
//! not make a second plugin of the same name loadable.

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::names::{is_registered_tool_name, BUILTIN_TOOL_NAMESPACES};

/// Whether a plugin name is a built-in tool namespace (`file`, `shell`, ...).
pub fn is_builtin_namespace(plugin: &str) -> bool {
    BUILTIN_TOOL_NAMESPACES.contains(&plugin)
}

/// Why a plugin's tools cannot be loaded on an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolRejection {
    /// A prefixed name does not match `^[a-z][a-z0-9-]+\.[a-z][a-z0-9_]*$`.
    InvalidName {
        /// The prefixed tool name.
        tool: String,
    },
    /// A prefixed name is already registered by an earlier plugin.
    Collision {
        /// The prefixed tool name.
        tool: String,
        /// The plugin (manifest) name that registered it first.
        first: String,
        /// The declaration key of the first plugin.
        first_key: String,
    },
    /// The manifest declares the same tool twice.
    Duplicate {
        /// The prefixed tool name.
        tool: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Owned {
    tool: String,
    plugin: String,
    key: String,
}

/// The tools provided by the plugins loaded on one agent, in load order.
#[derive(Debug, Clone, Default)]
pub struct ToolRegistry {
    owned: Vec<Owned>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> ToolRegistry {
        ToolRegistry::default()
    }

    /// Check every tool of `manifest` against the naming rule and this
    /// registry; on success, the prefixed names in manifest order.
    pub fn check(&self, manifest: &Manifest) -> Result<Vec<String>, ToolRejection> {
        let names = manifest.prefixed_tool_names();
        for (i, tool) in names.iter().enumerate() {
            if !is_registered_tool_name(tool) {
                return Err(ToolRejection::InvalidName { tool: tool.clone() });
            }
            if let Some(first) = self.owned.iter().find(|o| o.tool == *tool) {
                return Err(ToolRejection::Collision {
                    tool: tool.clone(),
                    first: first.plugin.clone(),
                    first_key: first.key.clone(),
                });
            }
            if names[..i].contains(tool) {
                return Err(ToolRejection::Duplicate { tool: tool.clone() });
            }
        }
        Ok(names)
    }

    /// Record `tools` as provided by `plugin` (declaration `key`).
    pub fn add(&mut self, plugin: &str, key: &str, tools: &[String]) {
        self.owned.extend(tools.iter().map(|t| Owned {
            tool: t.clone(),
            plugin: plugin.to_string(),
            key: key.to_string(),
        }));
    }

    /// The plugin that provides `tool`.
    pub fn owner(&self, tool: &str) -> Option<&str> {
        self.owned
            .iter()
            .find(|o| o.tool == tool)
            .map(|o| o.plugin.as_str())
    }

    /// Every provided tool, in load order.
    pub fn tools(&self) -> Vec<&str> {
        self.owned.iter().map(|o| o.tool.as_str()).collect()
    }
}
