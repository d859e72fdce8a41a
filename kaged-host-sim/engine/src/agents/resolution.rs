//! The result of resolving a project: per agent path, the active plugins in
//! declaration order, the designated compactor, the registered tools and the
//! audit-style events produced.

use kaged_plugin_protocol::{HookName, PluginRole};
use serde_json::{Map, Value};

use super::error::ResolveWarning;
use super::event::HostEvent;
use super::project::{Isolation, PRIMARY};
use kaged_host_core::audit::{AuditEvent, AuditLog};

/// A plugin active on one agent.
#[derive(Debug, Clone, PartialEq)]
pub struct ActivePlugin {
    /// The declaration key (`memory`).
    pub key: String,
    /// The package (`@kaged/memory-hindsight`), after the cascade.
    pub package: String,
    /// The plugin (manifest) name (`memory-hindsight`).
    pub name: String,
    /// The isolation, after the cascade.
    pub isolation: Isolation,
    /// The hooks the declaration subscribes to on this agent, after the
    /// cascade (the manifest's hooks when the declaration omits `hooks:`),
    /// including primary-only hooks a subagent declared.
    pub declared_hooks: Vec<HookName>,
    /// The hooks fired on this agent: [`ActivePlugin::declared_hooks`]
    /// without the primary-only ones on a subagent.
    pub hooks: Vec<HookName>,
    /// The validated project + system config union.
    pub config: Map<String, Value>,
    /// The project side of the config (after cascade and defaults).
    pub project_config: Map<String, Value>,
    /// The system side of the config (after defaults).
    pub system_config: Map<String, Value>,
    /// The manifest's roles on this agent: `compactor` only when this
    /// plugin is the agent's designated compactor.
    pub roles: Vec<PluginRole>,
    /// The prefixed tools the plugin provides on this agent (opt-outs removed).
    pub tools: Vec<String>,
}

impl ActivePlugin {
    /// Whether this plugin is the agent's designated compactor.
    pub fn is_compactor(&self) -> bool {
        self.roles.contains(&PluginRole::Compactor)
    }

    /// The `role` sent with `pre_compact` / `post_compact` (ADDENDUM §5).
    pub fn compact_role(&self) -> PluginRole {
        if self.is_compactor() {
            PluginRole::Compactor
        } else {
            PluginRole::Observer
        }
    }

    /// Whether the plugin receives `hook` on this agent.
    pub fn fires(&self, hook: HookName) -> bool {
        self.hooks.contains(&hook)
    }
}

/// The resolution of one agent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AgentResolution {
    /// The canonical agent path.
    pub path: String,
    /// The active plugins, in declaration order.
    pub plugins: Vec<ActivePlugin>,
    /// The declaration key of the designated compactor.
    pub compactor: Option<String>,
    /// The registered prefixed tool names, in load order.
    pub tools: Vec<String>,
    /// The events produced while resolving this agent, in order.
    pub events: Vec<HostEvent>,
    /// Load-time warnings without an audit event.
    pub warnings: Vec<ResolveWarning>,
}

impl AgentResolution {
    /// Whether this is the primary agent.
    pub fn is_primary(&self) -> bool {
        self.path == PRIMARY
    }

    /// The active plugin with this declaration key.
    pub fn plugin(&self, key: &str) -> Option<&ActivePlugin> {
        self.plugins.iter().find(|p| p.key == key)
    }

    /// The designated compactor.
    pub fn compactor_plugin(&self) -> Option<&ActivePlugin> {
        self.compactor.as_deref().and_then(|k| self.plugin(k))
    }

    /// The active declaration keys, in declaration order.
    pub fn keys(&self) -> Vec<&str> {
        self.plugins.iter().map(|p| p.key.as_str()).collect()
    }

    /// The plugins that receive `hook` on this agent, in declaration order
    /// (never a primary-only hook on a subagent).
    pub fn hooks_to_fire(&self, hook: HookName) -> Vec<&ActivePlugin> {
        if hook.primary_only() && !self.is_primary() {
            return Vec::new();
        }
        self.plugins.iter().filter(|p| p.fires(hook)).collect()
    }
}

/// The resolution of a whole project.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Resolution {
    /// Every agent, primary first then depth-first in declaration order.
    pub agents: Vec<AgentResolution>,
}

impl Resolution {
    /// The agent at a canonical path.
    pub fn agent(&self, path: &str) -> Option<&AgentResolution> {
        self.agents.iter().find(|a| a.path == path)
    }

    /// Every agent path, in resolution order.
    pub fn agent_paths(&self) -> Vec<&str> {
        self.agents.iter().map(|a| a.path.as_str()).collect()
    }

    /// The plugins that must receive `hook` on `agent_path`, in declaration
    /// order; empty for an unknown path and for a primary-only hook off the
    /// primary.
    pub fn hooks_to_fire(&self, agent_path: &str, hook: HookName) -> Vec<&ActivePlugin> {
        self.agent(agent_path)
            .map(|a| a.hooks_to_fire(hook))
            .unwrap_or_default()
    }

    /// Every event, in the order produced.
    pub fn events(&self) -> Vec<&HostEvent> {
        self.agents.iter().flat_map(|a| &a.events).collect()
    }

    /// The events of one kind, in order.
    pub fn events_of(&self, event: AuditEvent) -> Vec<&HostEvent> {
        self.events()
            .into_iter()
            .filter(|e| e.event == event)
            .collect()
    }

    /// Every warning, in order.
    pub fn warnings(&self) -> Vec<&ResolveWarning> {
        self.agents.iter().flat_map(|a| &a.warnings).collect()
    }

    /// Emit every event into `log`, in order.
    pub fn emit_into(&self, log: &AuditLog) {
        for e in self.events() {
            e.emit(log);
        }
    }
}
