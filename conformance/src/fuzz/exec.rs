//! Running one sequence on a fresh plugin process and checking every
//! property after every operation ([`Property`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use kaged_host_core::time::{TimeScale, Timeouts};
use kaged_host_core::{
    AuditEvent, AuditLog, CageMode, CallError, FirstConfig, HostConfig, HostSim, PluginHandle,
    Transcript,
};
use kaged_host_storage::BrokerHandler;
use kaged_plugin_protocol::{PluginCallContext, RpcError};
use serde_json::Value;

use super::plan::Op;
use super::Property;
use crate::valid_args::{judge_error, ValidArgsAnswer};

/// A property broken by a sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct Broken {
    /// Which.
    pub property: Property,
    /// The operation (from 1) after which it broke; 0: at launch.
    pub step: usize,
    /// What happened.
    pub detail: String,
}

/// How each sequence's plugin runs.
#[derive(Debug, Clone)]
pub struct Runner {
    /// The plugin directory.
    pub dir: PathBuf,
    /// The time scale.
    pub scale: TimeScale,
    /// The cage mode.
    pub cage: CageMode,
    /// The config root (`config:/` grants).
    pub config_root: PathBuf,
    /// The first `config.update` each process is sent.
    pub first_config: FirstConfig,
    /// The cage as the first process got it (its cgroup applied or not),
    /// for the report: what every spawn of the run gets.
    pub applied: Arc<std::sync::OnceLock<kaged_host_core::cage::CageSummary>>,
}

/// Audit events no operation may cause.
const UNCLEAN: [AuditEvent; 5] = [
    AuditEvent::ProtocolViolation,
    AuditEvent::StorageDenied,
    AuditEvent::StdoutNoise,
    AuditEvent::NotificationFlood,
    AuditEvent::OversizeMessage,
];

impl Runner {
    fn host(&self, audit: &AuditLog) -> HostSim {
        let handler: Arc<dyn kaged_host_core::PluginRequestHandler> = match BrokerHandler::temp() {
            Ok(h) => Arc::new(h),
            Err(_) => Arc::new(kaged_host_core::DefaultHandler),
        };
        HostSim::new(
            HostConfig::default()
                .with_time_scale(self.scale)
                .with_audit(audit.clone())
                .with_transcript(Transcript::discard())
                .with_storage(handler)
                .with_cage(self.cage)
                .with_config_root(self.config_root.clone())
                .with_first_config(self.first_config.clone())
                // How long an interpreter takes to start or exit depends on
                // how busy the machine is, not on the plugin (and `run`
                // judges start-up): only the answers' budgets are scaled.
                .with_adjust_timeouts(Some(Timeouts::with_spec_startup_and_exit)),
        )
    }

    /// Launch a fresh process (the caller shuts it down).
    pub async fn launch(&self, audit: &AuditLog) -> Result<PluginHandle, String> {
        let plugin = self
            .host(audit)
            .launch(Path::new(&self.dir))
            .await
            .map_err(|e| kaged_plugin_protocol::error_chain::chain(&e))?;
        if let Some(applied) = plugin.cage().and_then(|c| c.summary.clone()) {
            let _ = self
                .applied
                .set(crate::runner::RunCage::as_reported(applied));
        }
        Ok(plugin)
    }

    /// Run `ops` on a fresh process; the first broken property, if any.
    pub async fn run(&self, ops: &[Op]) -> Option<Broken> {
        let audit = AuditLog::memory();
        let plugin = match self.launch(&audit).await {
            Ok(s) => s,
            Err(e) => {
                return Some(Broken {
                    property: Property::NoCrash,
                    step: 0,
                    detail: format!("the plugin did not start: {e}"),
                })
            }
        };
        let mut broken = None;
        let mut audited = 0;
        for (i, op) in ops.iter().enumerate() {
            if let Err((property, detail)) = apply(&plugin, op).await {
                broken = Some(Broken {
                    property,
                    step: i + 1,
                    detail,
                });
                break;
            }
            // Only what this operation added: earlier ones were clean.
            let added = audit.since(audited);
            audited += added.len();
            if let Some(ev) = added.into_iter().find(|r| UNCLEAN.contains(&r.event)) {
                broken = Some(Broken {
                    property: Property::CleanWire,
                    step: i + 1,
                    detail: ev.describe(),
                });
                break;
            }
        }
        plugin.shutdown().await;
        broken
    }
}

/// How the plugin ended, for a detail: ` (exit code 70; last stderr
/// line: "...")`, waiting for its exit at most its shutdown budget.
async fn ended(plugin: &PluginHandle) -> String {
    let exit = plugin.wait_exit(plugin.timeouts().shutdown).await;
    let words = kaged_host_core::last_words::last_words(&plugin.stderr_tail());
    let exit = exit.map_or("not exited".to_string(), |e| e.to_string());
    match words.as_slice() {
        [] => format!(" ({exit}; nothing on stderr)"),
        [line] => format!(" ({exit}; last stderr line: {line:?})"),
        lines => format!(" ({exit}; on stderr: {:?})", lines.join(" | ")),
    }
}

/// A call's answer: a result or the plugin's error.
type Answer = Result<Value, Box<RpcError>>;

/// Call `method`; `Err` when no answer came (the property that broke).
async fn call(
    plugin: &PluginHandle,
    method: &str,
    params: &Value,
    ctx: Option<&PluginCallContext>,
) -> Result<Answer, (Property, String)> {
    match plugin
        .call(method, Some(params.clone()), ctx.cloned())
        .await
    {
        Ok(v) => Ok(Ok(v)),
        Err(CallError::Plugin { error, .. }) => Ok(Err(error)),
        Err(e) => Err(lost(plugin, &e, method).await),
    }
}

type Outcome = Result<(), (Property, String)>;

/// Do `op`; `Err` names the property it broke.
pub fn apply<'a>(plugin: &'a PluginHandle, op: &'a Op) -> BoxFuture<'a, Outcome> {
    async move {
        match op {
            Op::Together(ops) => {
                let all =
                    futures_util::future::join_all(ops.iter().map(|o| apply(plugin, o))).await;
                all.into_iter().collect::<Result<Vec<()>, _>>().map(|_| ())
            }
            Op::Ping => match plugin.ping().await {
                Ok(_) => Ok(()),
                Err(e) => Err(lost(plugin, &e, "ping").await),
            },
            Op::Method {
                method,
                params,
                valid,
            } => match call(plugin, method, params, None).await? {
                Err(error) if *valid == Some(true) && [-32602, -32603].contains(&error.code) => Err((
                    Property::ValidArgsAccepted,
                    format!(
                        "{method}: answered {} ({}) to params its profile's params_schema allows",
                        error.code, error.message
                    ),
                )),
                Ok(_) | Err(_) => Ok(()),
            },
            Op::Tool {
                method,
                args,
                valid: true,
                ctx,
            } => match call(plugin, method, args, Some(ctx)).await? {
                // One rule with `run`'s `methods.tool_valid_args`.
                Err(error) => match judge_error(error.code, &error.message) {
                    ValidArgsAnswer::Accepted => Ok(()),
                    ValidArgsAnswer::Refused(why) => Err((
                        Property::ValidArgsAccepted,
                        format!(
                            "{method}: answered error {} ({}) to arguments its schema allows: {why}",
                            error.code, error.message
                        ),
                    )),
                },
                Ok(_) => Ok(()),
            },
            Op::Tool {
                method,
                args,
                valid: false,
                ctx,
            } => judge(
                call(plugin, method, args, Some(ctx)).await?,
                false,
                -32602,
                method,
                Property::ValidArgsAccepted,
                Property::InvalidArgsRejected,
            ),
            Op::Hook { hook, params, ctx } => {
                let what = hook.method();
                let r = call(plugin, what, params, Some(ctx)).await?;
                if params["role"] == "compactor" {
                    return compactor(params, ctx, r, what);
                }
                match r {
                    Ok(answer) => shape(*hook, &answer).map_err(|e| {
                        (
                            Property::HookAnswers,
                            format!("{what}: an answer the spec does not allow: {e}: {answer}"),
                        )
                    }),
                    Err(error) => Err((
                        Property::HookAnswers,
                        format!(
                            "{what}: error {} ({}) instead of an answer",
                            error.code, error.message
                        ),
                    )),
                }
            }
            Op::Config { config, valid } => judge(
                call(plugin, "config.update", config, None).await?,
                *valid,
                -32004,
                "config.update",
                Property::ValidConfigAccepted,
                Property::InvalidConfigRejected,
            ),
        }
    }
    .boxed()
}

fn judge(
    r: Answer,
    valid: bool,
    code: i64,
    what: &str,
    valid_property: Property,
    invalid_property: Property,
) -> Outcome {
    match r {
        Ok(_) if valid => Ok(()),
        Ok(v) => Err((
            invalid_property,
            format!("{what}: accepted input its schema refuses, answering {v}"),
        )),
        Err(error) => match (valid, error.code == code) {
            (true, true) => Err((
                valid_property,
                format!(
                    "{what}: refused input its schema allows with {code}: {}",
                    error.message
                ),
            )),
            (false, false) => Err((
                invalid_property,
                format!(
                    "{what}: answered {} ({}) to input its schema refuses, not {code}",
                    error.code, error.message
                ),
            )),
            _ => Ok(()),
        },
    }
}

/// The designated compactor's `pre_compact` answer, held to the contract
/// (ADDENDUM §5-6): every always-keep message kept, only compacted ones
/// superseded.
fn compactor(params: &Value, ctx: &PluginCallContext, r: Answer, what: &str) -> Outcome {
    let answer = match r {
        Ok(a) => a,
        Err(error) => {
            return Err((
                Property::CompactorContract,
                format!(
                    "{what}: error {} ({}) instead of a CompactorResult",
                    error.code, error.message
                ),
            ))
        }
    };
    let mut full = params.clone();
    full[kaged_plugin_protocol::CONTEXT_KEY] = serde_json::to_value(ctx).unwrap_or_default();
    let cp: kaged_plugin_protocol::CompactParams = match serde_json::from_value(full) {
        Ok(cp) => cp,
        Err(e) => {
            return Err((
                Property::CompactorContract,
                format!("the fuzzer's own params do not parse: {e}"),
            ))
        }
    };
    kaged_plugin_protocol::validate_compactor_result(&cp, &answer)
        .map(|_| ())
        .map_err(|v| {
            let kept = kaged_plugin_protocol::always_keep_ids(&cp).len();
            (
                Property::CompactorContract,
                format!(
                    "{what}: {v} ({} being compacted, {} remaining, {kept} always-keep)",
                    cp.messages_being_compacted.len(),
                    cp.messages_remaining.len()
                ),
            )
        })
}

/// Whether `answer` is a shape the spec allows for `hook` from an observer.
fn shape(hook: kaged_plugin_protocol::HookName, answer: &Value) -> Result<(), String> {
    use kaged_plugin_protocol::HookName as H;
    match hook {
        H::OnSessionStart => kaged_plugin_protocol::parse_session_start_answer(answer).map(|_| ()),
        H::OnSessionIdle => Ok(()),
        H::PreCompact | H::PostCompact => {
            kaged_plugin_protocol::parse_observer_answer(answer).map(|_| ())
        }
    }
}

/// A call that got no answer: a timeout, or the process gone (with its
/// exit status and last stderr line).
async fn lost(plugin: &PluginHandle, e: &CallError, what: &str) -> (Property, String) {
    let detail = format!("{what}: {}", kaged_plugin_protocol::error_chain::chain(e));
    match e {
        CallError::Timeout { .. } => (Property::AnswersInTime, detail),
        CallError::Closed { .. } => (Property::NoCrash, detail + &ended(plugin).await),
        _ => (Property::NoCrash, detail),
    }
}
