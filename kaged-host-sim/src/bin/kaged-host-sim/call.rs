//! `kaged-host-sim call DIR METHOD [PARAMS_JSON] [--context JSON | --agent
//! PATH [--project ID] [--session ID]] [--force] [--json]`.
//!
//! stdout is the answer only; the `cage: ...` line goes to stderr. A hook is
//! called by its short name (`on_session_start`) or its method
//! (`kaged.hook.on_session_start`); a method the plugin does not declare is
//! answered with what it does declare.

use std::path::Path;
use std::process::ExitCode;

use kaged_host_core::CallError;
use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::{HookName, PluginCallContext};
use serde_json::{json, Value};

use super::{one_line, CliError};
use kaged_host_core::HostSim;

/// The project id of the agent context a tool or hook call gets from the
/// CLI when neither `--context` nor `--project` says one.
pub const CLI_PROJECT: &str = "kaged-host-sim";

/// What to call, as the command line said it.
pub(super) struct CallRequest<'a> {
    pub method: &'a str,
    pub params: Option<&'a str>,
    pub context: Option<&'a str>,
    pub agent: Option<&'a str>,
    pub project: Option<&'a str>,
    pub session: Option<&'a str>,
    pub json: bool,
}

/// Parse a `--context` / PARAMS argument.
pub(super) fn parse_json<T: serde::de::DeserializeOwned>(
    what: &str,
    text: &str,
) -> Result<T, CliError> {
    serde_json::from_str(text)
        .map_err(|e| CliError::Usage(one_line(&format!("invalid {what}"), &e)))
}

/// `host` sending `--plugin-config` (a JSON object) over the schemas'
/// defaults as its first `config.update`; `host` as it is without one.
pub(super) fn with_plugin_config(host: HostSim, config: Option<&str>) -> Result<HostSim, CliError> {
    let Some(text) = config else {
        return Ok(host);
    };
    let map: serde_json::Map<String, Value> = parse_json("--plugin-config (a JSON object)", text)?;
    Ok(HostSim::new(host.config().clone().with_first_config(
        kaged_host_core::FirstConfig::Given(map),
    )))
}

/// Refuse an installed copy its store has disabled, or whose manifest
/// asks more than was consented, unless `force`: the daemon would not
/// start it.
pub(super) fn refuse_disabled_copy(dir: &Path, force: bool) -> Result<(), CliError> {
    let entry = kaged_host_engine::installed_copy(dir)
        .map_err(|e| CliError::Usage(one_line("cannot read the plugin store", &e)))?;
    if let (Some((store, p)), false) = (&entry, force) {
        let check =
            kaged_host_engine::PluginStore::open(store, kaged_host_core::AuditLog::discard())
                .and_then(|s| s.check_consent(&p.name, None))
                .map_err(|e| CliError::Usage(one_line("cannot check the consent", &e)))?;
        if let Some(why) = check.refusal_message() {
            return Err(CliError::Usage(format!(
                "{} is the installed copy of {}, which the daemon would not start: {why}; \
                 or pass --force",
                dir.display(),
                p.name
            )));
        }
    }
    match entry {
        Some((store, p)) if !p.enabled && !force => {
            Err(CliError::Usage(format!(
                "{} is the installed copy of {}, which its store has disabled: the daemon would not start it; \
                 enable it (kaged-host-sim plugin enable {} --store {}) or pass --force",
                dir.display(),
                p.name,
                p.name,
                store.display()
            )))
        }
        _ => Ok(()),
    }
}

/// A unique enough id for one CLI call: `<prefix>_<pid>_<nanos>`.
fn generated_id(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{prefix}_cli_{}_{nanos:x}", std::process::id())
}

/// The method as the plugin answers to it: a hook's short name becomes its
/// `kaged.hook.*` method.
fn resolve_method(method: &str) -> String {
    match HookName::parse(method) {
        Some(h) => h.method().to_string(),
        None => method.to_string(),
    }
}

/// Empty params of a hook's shape, for a hook called without params.
fn default_hook_params(hook: HookName, manifest: &Manifest) -> Value {
    let role = if manifest
        .effective_roles()
        .contains(&kaged_plugin_protocol::PluginRole::Compactor)
        && hook == HookName::PreCompact
    {
        "compactor"
    } else {
        "observer"
    };
    match hook {
        HookName::OnSessionStart => json!({}),
        HookName::OnSessionIdle => json!({ "transcript": [] }),
        HookName::PreCompact | HookName::PostCompact => json!({
            "role": role,
            "messages_being_compacted": [],
            "messages_remaining": [],
            "strategy": "cli",
            "trigger": "manual",
        }),
    }
}

/// What the plugin answers to, for a "not declared" error.
fn declared_hint(m: &Manifest) -> String {
    let list = |v: Vec<String>| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    format!(
        "{} declares methods: {}; tools: {}; hooks: {} (call a hook by its name, e.g. `on_session_start`)",
        m.name,
        list(m.methods.clone()),
        list(m.prefixed_tool_names()),
        list(m.hook_names().iter().map(|h| h.as_str().to_string()).collect()),
    )
}

pub(super) async fn run(
    host: &HostSim,
    dir: &Path,
    req: CallRequest<'_>,
) -> Result<ExitCode, CliError> {
    let method = resolve_method(req.method);
    let params: Option<Value> = req
        .params
        .map(|p| parse_json("PARAMS_JSON", p))
        .transpose()?;
    let mut ctx: Option<PluginCallContext> = req
        .context
        .map(|c| parse_json("--context", c))
        .transpose()?;
    if let Some(agent) = req.agent {
        ctx = Some(PluginCallContext::agent(
            req.project.unwrap_or(CLI_PROJECT),
            agent,
            req.session
                .map_or_else(|| generated_id("ses"), str::to_string),
            generated_id("req"),
        ));
    }
    let plugin = host.launch(dir).await.map_err(|e| {
        CliError::Failed(one_line(
            &format!("cannot start the plugin in {}", dir.display()),
            &e,
        ))
    })?;
    eprintln!("{}", super::caging::line(&plugin, None));
    if let Some(sent) = plugin.first_config().filter(|s| s.refused.is_some()) {
        eprintln!("{}", super::script::first_config_line(&sent));
    }
    let hook = HookName::from_method(&method);
    // Tools and hooks are for agents: without a context, they get the
    // primary agent's context of a CLI session.
    if ctx.is_none() && (hook.is_some() || plugin.manifest().is_prefixed_tool(&method)) {
        ctx = Some(PluginCallContext::agent(
            CLI_PROJECT,
            "primary",
            generated_id("ses"),
            generated_id("req"),
        ));
    }
    let params = match (params, hook) {
        (None, Some(h)) => Some(default_hook_params(h, plugin.manifest())),
        (p, _) => p,
    };
    let result = plugin.call(&method, params, ctx).await;
    // Said only when the name was not one the plugin answers to.
    let hint = matches!(result, Err(CallError::NotDeclared { .. }))
        .then(|| declared_hint(plugin.manifest()));
    let outcome = plugin.shutdown().await;
    if !outcome.is_clean() {
        tracing::warn!(outcome = %outcome, "plugin did not stop cleanly");
    }
    match result {
        Ok(v) => {
            if req.json {
                kaged_host_core::outln!("{v}");
            } else {
                kaged_host_core::outln!(
                    "{}",
                    serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string())
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            if req.json {
                kaged_host_core::outln!(
                    "{}",
                    serde_json::to_value(e.rpc_error()).unwrap_or(Value::Null)
                );
            } else {
                eprintln!("{}", one_line(&format!("error: {method} failed"), &e));
                if let Some(hint) = &hint {
                    eprintln!("hint: {hint}");
                }
            }
            Ok(ExitCode::from(1))
        }
    }
}
