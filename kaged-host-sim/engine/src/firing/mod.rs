//! Firing lifecycle hooks on a resolved project, end to end (issue #6
//! part 2): [`AgentHost`] resolves a project against plugin directories,
//! launches every plugin once, and fires `on_session_start`,
//! `on_session_idle`, `pre_compact` and `post_compact` on an agent path.
//!
//! * [`AgentHost::start`] / [`AgentHost::from_files`]: resolve
//!   ([`crate::agents::resolve()`]), emit the resolution events into the audit
//!   log (also when resolution fails), then launch one process per plugin
//!   directory, shared by every agent declaring it. A plugin that fails to
//!   launch does not block the others: see [`AgentHost::failed`].
//! * [`AgentHost::start_session`] ([`mod@start`]): `on_session_start`, primary only.
//! * [`AgentHost::idle`] ([`mod@start`]): `on_session_idle`, primary only.
//! * [`AgentHost::compact`] ([`mod@compact`]): `pre_compact`, compactor or
//!   strategy, `post_compact`, with the ADDENDUM §5 audit chain.
//!
//! Every hook goes through [`PluginHandle::call`], which serializes hooks
//! per plugin, applies `hook_timeout_sec` and audits `plugin.hook.fired` /
//! `returned` / `timeout` / `failed`. A timeout or an error is treated as
//! `null` and the operation continues.
//!
//! **Per-agent config.** A plugin process is shared by the agents declaring
//! it, but its merged config ([`ActivePlugin::config`]) is per agent. The
//! host sends `config.update` with the first declaring agent's config
//! (primary first) right after launch, and again before any hook fired for
//! an agent whose merged config differs from the last one sent; the
//! `config.update` and the hook run under one per-process gate, so a hook
//! always sees its own agent's config. An empty config is never sent to a
//! plugin that has not been sent one. A rejected `config.update` is logged
//! (tracing) and does not stop the hook.
//!
//! **The project's load and unload.** The plugins start for the project:
//! their `initialize` lists the project id in `projects`. After the first
//! `config.update`, each gets `projects.activated {project, config}`, and
//! before [`AgentHost::shutdown`] stops it, `projects.deactivated
//! {project}` (plugin-host.md § System methods). A plugin's error answer
//! is logged and changes nothing.
//!
//! **Hook `_context`.** Every hook carries `operator_id: "operator"`, the
//! host's project id (by default the project file's directory, see
//! [`Project::with_id`]), the agent path, the session id and a
//! request id unique within the host (`req_hook_<n>`).
//!
//! **Malformed answers.** An observer or `on_session_start` answer that is
//! not `null`/`{}`/the documented object is audited as `plugin.hook.failed`
//! with `error_code: null`, `malformed_answer: true` and the parse error as
//! `error_message`, and treated as `null`.
//!
//! **The `audit` of an outcome** is the audit records emitted during the
//! operation (needs a memory audit log, e.g. [`AuditLog::memory`]); two
//! operations run concurrently see each other's records.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use kaged_host_core::HostSim;
//! use kaged_host_engine::{AgentHost, CompactRequest, PluginDirs};
//! use kaged_plugin_protocol::{Message, MessageRole};
//!
//! let agents = AgentHost::from_files(
//!     HostSim::default(),
//!     "project.yaml".as_ref(),
//!     &PluginDirs::Root("plugins".into()),
//!     None,
//! )
//! .await?;
//! let start = agents.start_session("primary", "ses_1").await?;
//! println!("{}", start.system_prompt_prefix);
//! let req = CompactRequest::new(
//!     "ses_1",
//!     vec![Message::new("m1", MessageRole::User, "old")],
//!     vec![Message::new("m2", MessageRole::User, "new")],
//! );
//! let out = agents.compact("primary", req).await?;
//! println!("{} message(s), fallback {}", out.messages.len(), out.fallback);
//! agents.shutdown().await;
//! # Ok(()) }
//! ```

pub mod compact;
mod error;
pub mod knobs;
mod plugins;
pub mod start;
pub use error::AgentHostError;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use kaged_plugin_protocol::{methods, HookName, PluginCallContext, PluginRole};
use serde_json::{json, Map, Value};

use crate::agents::{resolve, ActivePlugin, AgentResolution, Project, Resolution, SystemConfig};
use kaged_host_core::audit::{AuditEvent, AuditLog, AuditRecord};
use kaged_host_core::CallError;
use kaged_host_core::HostSim;
use kaged_host_core::PluginHandle;
use kaged_host_core::ShutdownOutcome;

pub use compact::{CompactRequest, CompactionOutcome};
pub use knobs::{
    check_must_exist, KnobRoots, KnobWrite, KnobWriteError, KnobWriteRequest, KnobWritten,
};
pub use plugins::{FailedPlugin, PluginDirs};
pub use start::{IdleOutcome, SessionStart};

use plugins::Running;

/// The `plugin` of audit events the host emits on its own behalf
/// (`compaction.completed` when no compactor is involved).
pub const HOST_AUDIT_NAME: &str = "kaged";

/// A resolved project with its plugins running (see the module docs).
#[derive(Debug)]
pub struct AgentHost {
    host: HostSim,
    resolution: Resolution,
    plugins: Vec<Running>,
    failed: Vec<FailedPlugin>,
    project_id: String,
    request_seq: AtomicU64,
}

impl AgentHost {
    /// Load `project_file` (and the system config `local`, `${VAR}`
    /// substituted from the process environment), then [`AgentHost::start`].
    /// The project id is the project file's directory.
    pub async fn from_files(
        host: HostSim,
        project_file: &Path,
        plugins: &PluginDirs,
        local: Option<&Path>,
    ) -> Result<AgentHost, AgentHostError> {
        let mut project = Project::load(project_file).map_err(AgentHostError::Project)?;
        if let Some(local) = local {
            let env: BTreeMap<String, String> = std::env::vars().collect();
            let system = SystemConfig::load(local, &env).map_err(AgentHostError::SystemConfig)?;
            project = project.with_system_config(system);
        }
        AgentHost::start(host, &project, plugins).await
    }

    /// Resolve `project` against `plugins`, emit the resolution events into
    /// the host's audit log, launch every active plugin once and send each
    /// its first declaring agent's config. A plugin that fails to launch
    /// does not stop the others: it is audited and listed in
    /// [`AgentHost::failed`]. On an error nothing is left running.
    pub async fn start(
        host: HostSim,
        project: &Project,
        plugins: &PluginDirs,
    ) -> Result<AgentHost, AgentHostError> {
        let found = plugins::load(plugins)?;
        let resolution = match resolve(project, &found.catalogue) {
            Ok(r) => r,
            Err(e) => {
                for ev in &e.events {
                    ev.emit(host.audit());
                }
                return Err(AgentHostError::Resolve(e));
            }
        };
        resolution.emit_into(host.audit());
        let project_id = project.id.clone();
        // The plugins start for this project: `initialize` lists it.
        let launching = HostSim::new(
            host.config()
                .clone()
                .with_projects(vec![project_id.clone()]),
        );
        let launched = plugins::launch_all(&launching, &resolution, &found).await?;
        let agents = AgentHost {
            host,
            resolution,
            plugins: launched.running,
            failed: launched.failed,
            project_id,
            request_seq: AtomicU64::new(1),
        };
        for r in &agents.plugins {
            let mut gate = r.gate.lock().await;
            agents.ensure_config(r, &mut gate, &r.first_config).await;
            let params = json!({"project": agents.project_id, "config": r.first_config});
            agents
                .system_call(r, methods::PROJECTS_ACTIVATED, params)
                .await;
        }
        Ok(agents)
    }

    /// The project id ([`Project::id`]) sent in `initialize`,
    /// `projects.activated` / `deactivated` and every `_context`.
    pub fn project_id(&self) -> &str {
        &self.project_id
    }

    /// The resolution the host runs.
    pub fn resolution(&self) -> &Resolution {
        &self.resolution
    }

    /// The audit log.
    pub fn audit(&self) -> &AuditLog {
        self.host.audit()
    }

    /// The simulated daemon the plugins were launched with.
    pub fn host(&self) -> &HostSim {
        &self.host
    }

    /// The running plugins, in launch order.
    pub fn plugins_running(&self) -> impl Iterator<Item = &PluginHandle> {
        self.plugins.iter().map(|r| &r.plugin)
    }

    /// The running plugin with this (manifest) name.
    pub fn plugin(&self, name: &str) -> Option<&PluginHandle> {
        self.plugins_running().find(|s| s.name() == name)
    }

    /// The plugins that could not be launched, in launch order (see
    /// [`FailedPlugin`]).
    pub fn failed(&self) -> &[FailedPlugin] {
        &self.failed
    }

    /// The process ids (= process group ids) of the running plugins.
    pub fn pids(&self) -> Vec<u32> {
        self.plugins_running()
            .filter_map(PluginHandle::pid)
            .collect()
    }

    /// Unload the project (each running plugin gets `projects.deactivated`),
    /// then shut every plugin down (gracefully, see
    /// [`PluginHandle::shutdown`]), in launch order; returns each plugin's
    /// outcome.
    pub async fn shutdown(self) -> Vec<(String, ShutdownOutcome)> {
        let mut out = Vec::new();
        for r in &self.plugins {
            if r.plugin.is_running() {
                let params = json!({"project": self.project_id});
                self.system_call(r, methods::PROJECTS_DEACTIVATED, params)
                    .await;
            }
            out.push((r.plugin.name().to_string(), r.plugin.shutdown().await));
        }
        out
    }

    /// Send a system method whose answer changes nothing here (the
    /// plugin's error or timeout is logged, and audited by the session).
    async fn system_call(&self, r: &Running, method: &str, params: Value) {
        if let Err(e) = r.plugin.call(method, Some(params), None).await {
            tracing::warn!(plugin = r.plugin.name(), error = %e, "{method} failed");
        }
    }

    fn agent(&self, path: &str) -> Result<&AgentResolution, AgentHostError> {
        self.resolution
            .agent(path)
            .ok_or_else(|| AgentHostError::UnknownAgent(path.to_string()))
    }

    /// A full hook context with a fresh request id.
    pub(crate) fn context(&self, agent_path: &str, session_id: &str) -> PluginCallContext {
        let n = self.request_seq.fetch_add(1, Ordering::SeqCst);
        PluginCallContext::agent(
            self.project_id.clone(),
            agent_path,
            session_id,
            format!("req_hook_{n}"),
        )
    }

    async fn ensure_config(
        &self,
        r: &Running,
        sent: &mut Option<Map<String, Value>>,
        config: &Map<String, Value>,
    ) {
        // The first is always sent, `{}` included (ADDENDUM §15): a plugin
        // can rely on a config.update right after `initialized`.
        if sent.as_ref() == Some(config) {
            return;
        }
        let params = Value::Object(config.clone());
        if let Err(e) = r
            .plugin
            .call(methods::CONFIG_UPDATE, Some(params), None)
            .await
        {
            tracing::warn!(plugin = r.plugin.name(), error = %e, "config.update failed");
        }
        *sent = Some(config.clone());
    }

    /// Fire `hook` on `plugin` with `ctx` (made by [`AgentHost::context`]
    /// for the agent whose config `plugin` carries): send that config when
    /// it differs from the last sent, then call the hook with `params` (an
    /// object; `_context` is set to `ctx`). `Err` is a timeout or failure,
    /// already audited by the session.
    pub(crate) async fn fire(
        &self,
        plugin: &ActivePlugin,
        hook: HookName,
        ctx: PluginCallContext,
        params: Value,
    ) -> Result<Value, CallError> {
        let Some(r) = plugins::find(&self.plugins, plugin) else {
            // A plugin that failed to launch has no process: not fired.
            return Err(CallError::Closed {
                method: hook.method().to_string(),
            });
        };
        let mut gate = r.gate.lock().await;
        self.ensure_config(r, &mut gate, &plugin.config).await;
        r.plugin.call(hook.method(), Some(params), Some(ctx)).await
    }

    /// Audit a malformed (unparseable) hook answer as `plugin.hook.failed`.
    /// Whether `p` may give the observer's answers (`inject`, `retain`):
    /// a hook fires for every subscriber, but only an observer's content
    /// is used (ADDENDUM §16). When `p` is not one and `gave` names what it
    /// answered anyway, that answer is ignored and audited
    /// `plugin.role_violation {hook, agent_path, ignored, roles}`.
    pub(crate) fn observer_may(
        &self,
        p: &ActivePlugin,
        hook: HookName,
        agent_path: &str,
        gave: &[&str],
    ) -> bool {
        if p.roles.contains(&PluginRole::Observer) {
            return true;
        }
        if !gave.is_empty() {
            let roles: Vec<&str> = p.roles.iter().map(|r| r.as_str()).collect();
            self.audit().emit(
                AuditEvent::RoleViolation,
                &p.name,
                json!({"hook": hook.as_str(), "agent_path": agent_path, "ignored": gave,
                       "roles": roles,
                       "reason": "only an observer's inject and retain are used"}),
            );
        }
        false
    }

    pub(crate) fn malformed(&self, plugin: &str, hook: HookName, agent_path: &str, why: &str) {
        self.audit().emit(
            AuditEvent::HookFailed,
            plugin,
            json!({"hook": hook.as_str(), "agent_path": agent_path, "error_code": null,
                   "error_message": why, "malformed_answer": true}),
        );
    }
}

/// The JSON form of audit records (ADDENDUM §9 lines).
pub fn audit_json(records: &[AuditRecord]) -> Vec<Value> {
    records.iter().map(AuditRecord::to_json).collect()
}
