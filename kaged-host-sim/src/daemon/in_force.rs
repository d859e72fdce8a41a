//! Which config a plugin's process holds, and putting the right one in
//! force before a call.
//!
//! One process serves the daemon and every agent that declares the plugin,
//! each with its own config. Before a call for an agent, that agent's
//! merged config is sent with `config.update` when the process holds
//! another; a daemon-level call puts the daemon-level config back when an
//! agent's was sent. A new process holds what the supervisor sent right
//! after its handshake: the daemon-level config (defaults applied, knob
//! writes at daemon level included) when the plugin has a config schema.

use kaged_plugin_protocol::{methods, PluginCallContext};
use serde_json::{Map, Value};

use super::error::DaemonError;
use super::managed::Managed;
use super::running::Daemon;
use kaged_host_core::PluginHandle;
use kaged_host_engine::agents::config::merge_config;

/// The config a call's context needs in force.
#[derive(Debug)]
pub(super) enum Wanted {
    /// The daemon-level config (defaults applied).
    Daemon(Map<String, Value>),
    /// An agent's merged config.
    Agent(Map<String, Value>),
}

impl Daemon {
    /// Call `method` on `name`: with a daemon context, or with `agent`'s
    /// context (a tool or hook needs one; it needs a project), in session
    /// `session_id` (default [`DEFAULT_API_SESSION`](super::DEFAULT_API_SESSION)). The config of that
    /// context is put in force first when the process holds another.
    /// `operator`: who asked (the API's `X-Kaged-User-Id`), the context's
    /// `operator_id` (default `operator`).
    pub async fn call(
        &self,
        name: &str,
        method: &str,
        params: Option<Value>,
        agent: Option<&str>,
        session_id: Option<&str>,
        operator: Option<&str>,
    ) -> Result<Value, DaemonError> {
        let managed = self.managed(name)?;
        let (ctx, wanted) = self.context_of(managed, agent, session_id).await?;
        let plugin = self.running(name)?;
        // A daemon-level call an API request makes carries its id; one
        // that names its operator needs a context to carry it.
        let ctx = ctx
            .or_else(|| kaged_host_core::audit::current_request_id().map(PluginCallContext::daemon))
            .or_else(|| operator.map(|_| PluginCallContext::daemon(plugin.next_request_id())))
            .map(|mut c| {
                if let Some(op) = operator {
                    c.operator_id = Some(op.to_string());
                }
                c
            });
        let mut in_force = managed.in_force.lock().await;
        ensure_config(managed, &plugin, &mut in_force, wanted, agent).await?;
        let out = plugin.call(method, params, ctx).await;
        drop(in_force);
        if let Err(kaged_host_core::CallError::Timeout { .. }) = &out {
            // plugin-host.md § Failure modes: a plugin that does not answer
            // within the request timeout is killed and restarted, as after
            // a crash; the kill is this request's (its audit carries the id).
            plugin.kill("request_timeout").await;
        }
        out.map_err(DaemonError::Call)
    }

    /// The context of a call on `managed` for `agent` (`None`: the daemon)
    /// and the config it needs in force.
    pub(super) async fn context_of(
        &self,
        managed: &Managed,
        agent: Option<&str>,
        session: Option<&str>,
    ) -> Result<(Option<PluginCallContext>, Wanted), DaemonError> {
        let name = managed.sup.name();
        let manifest = managed.manifest()?;
        let Some(agent) = agent else {
            let project = managed.config.lock().await.clone();
            let merged = merge_config(manifest, &project, None).map_or(project, |m| m.merged);
            return Ok((None, Wanted::Daemon(merged)));
        };
        let (project, active) = self.agent_plugin(agent, name)?;
        let config = project.project_config(agent, name).await;
        let merged = merge_config(manifest, &config, Some(&active.system_config))
            .map_or_else(|_| active.config.clone(), |m| m.merged);
        Ok((Some(project.context(agent, session)), Wanted::Agent(merged)))
    }
}

/// What the process of `session` holds, as far as the daemon knows (reset
/// to what its supervisor sent when the process is new).
pub(super) fn held<'a>(
    managed: &Managed,
    plugin: &PluginHandle,
    in_force: &'a mut Option<(u32, Map<String, Value>)>,
) -> &'a mut Option<(u32, Map<String, Value>)> {
    let pid = plugin.pid().unwrap_or_default();
    if in_force.as_ref().map(|(p, _)| *p) != Some(pid) {
        *in_force = managed.sup.config().map(|c| (pid, c));
    }
    in_force
}

/// Send `config` with `config.update` and record it as in force.
pub(super) async fn send_config(
    plugin: &PluginHandle,
    in_force: &mut Option<(u32, Map<String, Value>)>,
    config: Map<String, Value>,
) -> Result<(), kaged_host_core::CallError> {
    plugin
        .call(
            methods::CONFIG_UPDATE,
            Some(Value::Object(config.clone())),
            None,
        )
        .await?;
    *in_force = Some((plugin.pid().unwrap_or_default(), config));
    Ok(())
}

/// Put `wanted` in force in the process of `session` (see the module docs).
pub(super) async fn ensure_config(
    managed: &Managed,
    plugin: &PluginHandle,
    in_force: &mut Option<(u32, Map<String, Value>)>,
    wanted: Wanted,
    agent: Option<&str>,
) -> Result<(), DaemonError> {
    let held = held(managed, plugin, in_force);
    let config = match wanted {
        Wanted::Agent(c) if held.as_ref().map(|(_, h)| h) != Some(&c) => c,
        // Nothing sent to this process: it runs on its own defaults.
        Wanted::Daemon(c) if held.as_ref().is_some_and(|(_, h)| *h != c) => c,
        _ => return Ok(()),
    };
    send_config(plugin, held, config)
        .await
        .map_err(|source| DaemonError::ConfigRefused {
            plugin: managed.sup.name().to_string(),
            agent: agent.map(str::to_string),
            source: Box::new(source),
        })
}
