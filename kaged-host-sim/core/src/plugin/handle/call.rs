//! Calling a plugin: declared-method check, `_context` injection, timeouts
//! and the `plugin.method_*` / `plugin.hook.*` audits.

use std::time::{Duration, Instant};

use kaged_plugin_protocol::codec::EncodeError;
use kaged_plugin_protocol::{
    inject_context, methods, ErrorCode, HookName, PartialContext, PluginCallContext, RpcError,
    StatusOk,
};
use serde_json::{json, Value};

use crate::observe::audit::AuditEvent;
use crate::plugin::connection::RequestError;
use crate::plugin::handle::PluginHandle;

/// Why a call produced no result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The method is not declared by the manifest (nor a system method, nor
    /// a subscribed hook); nothing was sent.
    #[error("method {method:?} is not declared by plugin {plugin:?}")]
    NotDeclared {
        /// The plugin.
        plugin: String,
        /// The method.
        method: String,
    },
    /// The method is declared but the plugin did not list it in `initialize`.
    #[error("method {method:?} is unavailable: plugin {plugin:?} did not list it in initialize")]
    Unavailable {
        /// The plugin.
        plugin: String,
        /// The method.
        method: String,
    },
    /// The `_context` given breaks the all-or-none rule; nothing was sent.
    #[error("refusing to call {method:?}")]
    PartialContext {
        /// The method.
        method: String,
        /// The rule broken.
        #[source]
        source: PartialContext,
    },
    /// A hook needs a full agent context (ADDENDUM §6); nothing was sent.
    #[error("hook {method:?} needs a _context with project_id, agent_path and session_id")]
    HookNeedsAgentContext {
        /// The hook method.
        method: String,
    },
    /// A tool is dispatched by an agent and needs a full agent context
    /// (ADR-0023: every tool dispatch carries project_id, agent_path and
    /// session_id); nothing was sent.
    #[error("tool {method:?} is dispatched by an agent and needs a _context with project_id, agent_path and session_id")]
    ToolNeedsAgentContext {
        /// The prefixed tool name.
        method: String,
    },
    /// `_context` can only be injected into object params; nothing was sent.
    #[error("params of {method:?} must be a JSON object (or absent) to carry _context")]
    ParamsNotObject {
        /// The method.
        method: String,
    },
    /// The plugin answered with an error.
    #[error("plugin answered {method:?} with an error")]
    Plugin {
        /// The method.
        method: String,
        /// The plugin's error.
        #[source]
        error: Box<RpcError>,
    },
    /// No answer in time (the plugin is killed for a method, not for a hook).
    #[error("{method:?} timed out: no answer within {after:?}")]
    Timeout {
        /// The method.
        method: String,
        /// The effective timeout.
        after: Duration,
    },
    /// The plugin is gone (exited, crashed or killed).
    #[error("plugin is not running; {method:?} got no answer")]
    Closed {
        /// The method.
        method: String,
    },
    /// The request could not be encoded (e.g. over 4 MiB).
    #[error("cannot send {method:?}")]
    Encode {
        /// The method.
        method: String,
        /// The cause.
        #[source]
        source: EncodeError,
    },
    /// `ping` answered something other than `{"status": "ok"}`.
    #[error("ping answered {0}, not {{\"status\":\"ok\"}}")]
    BadPing(Value),
}

impl CallError {
    /// The call error of a request for `method` that got no result: the
    /// plugin's error answer, a timeout, a closed connection or an encoding
    /// failure. The one place a [`RequestError`] becomes a [`CallError`].
    pub fn from_request(method: &str, e: RequestError) -> CallError {
        let method = method.to_string();
        match e {
            RequestError::Rpc(error) => CallError::Plugin {
                method,
                error: Box::new(error),
            },
            RequestError::Timeout(after) => CallError::Timeout { method, after },
            RequestError::Closed => CallError::Closed { method },
            RequestError::Encode(source) => CallError::Encode { method, source },
        }
    }

    /// The JSON-RPC error a caller of the daemon would see: the plugin's own
    /// error, `-32601` for undeclared/unavailable methods, `-32602` for bad
    /// params or context, `-32603` for timeouts and dead plugins.
    pub fn rpc_error(&self) -> RpcError {
        let code = match self {
            CallError::Plugin { error, .. } => return (**error).clone(),
            CallError::NotDeclared { .. } | CallError::Unavailable { .. } => {
                ErrorCode::MethodNotFound
            }
            CallError::PartialContext { .. }
            | CallError::HookNeedsAgentContext { .. }
            | CallError::ToolNeedsAgentContext { .. }
            | CallError::ParamsNotObject { .. } => ErrorCode::InvalidParams,
            CallError::Timeout { .. }
            | CallError::Closed { .. }
            | CallError::Encode { .. }
            | CallError::BadPing(_) => ErrorCode::InternalError,
        };
        let mut msg = self.to_string();
        if let Some(src) = std::error::Error::source(self) {
            msg = format!("{msg}: {src}");
        }
        RpcError::new(code, msg)
    }

    /// The numeric code of [`CallError::rpc_error`].
    pub fn code(&self) -> i64 {
        self.rpc_error().code
    }
}

/// What kind of method a call targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Declared,
    Tool,
    System,
    Hook(HookName),
}

/// System methods callable through [`PluginHandle::call`].
const CALLABLE_SYSTEM: [&str; 4] = [
    methods::PING,
    methods::CONFIG_UPDATE,
    methods::PROJECTS_ACTIVATED,
    methods::PROJECTS_DEACTIVATED,
];

impl PluginHandle {
    fn classify(&self, method: &str) -> Result<Kind, CallError> {
        let not_declared = || CallError::NotDeclared {
            plugin: self.name().to_string(),
            method: method.to_string(),
        };
        if CALLABLE_SYSTEM.contains(&method) {
            return Ok(Kind::System);
        }
        if let Some(h) = HookName::from_method(method) {
            return match self.manifest().hook_names().contains(&h) {
                true => Ok(Kind::Hook(h)),
                false => Err(not_declared()),
            };
        }
        // Custom methods, then prefixed tools, without building the list
        // (`Manifest::declared_methods`) on every call.
        let manifest = self.manifest();
        if !(manifest.methods.iter().any(|m| m == method) || manifest.is_prefixed_tool(method)) {
            return Err(not_declared());
        }
        if self.is_unavailable(method) {
            return Err(CallError::Unavailable {
                plugin: self.name().to_string(),
                method: method.to_string(),
            });
        }
        if manifest.is_prefixed_tool(method) {
            Ok(Kind::Tool)
        } else {
            Ok(Kind::Declared)
        }
    }

    /// Call `method` with `params` (an object or absent) and `ctx`.
    ///
    /// Refused before sending: methods that are not custom methods, prefixed
    /// tools, callable system methods (`ping`, `config.update`,
    /// `projects.*`) or subscribed hooks (`-32601`); partial contexts and
    /// hooks and tools without a full agent context (`-32602`). Custom
    /// methods without `ctx` get a daemon-level context (`request_id` generated);
    /// system methods carry `_context` only when given one. Hooks use the
    /// hook timeout and `plugin.hook.*` audits and are never killed for
    /// timing out; other methods use the request timeout, audit
    /// `plugin.method_called` / `plugin.method_returned`, and a timeout
    /// kills the plugin (Failure modes: "Kill + restart") and answers
    /// `-32603`.
    pub async fn call(
        &self,
        method: &str,
        params: Option<Value>,
        ctx: Option<PluginCallContext>,
    ) -> Result<Value, CallError> {
        self.call_within(method, params, ctx, self.timeouts().request)
            .await
    }

    /// [`PluginHandle::call`], a method (not a hook) waited on for
    /// `budget` instead of the request timeout (the first `config.update`:
    /// `Timeouts::first_config`).
    pub(crate) async fn call_within(
        &self,
        method: &str,
        params: Option<Value>,
        ctx: Option<PluginCallContext>,
        budget: Duration,
    ) -> Result<Value, CallError> {
        let kind = self.classify(method)?;
        if let Some(c) = &ctx {
            c.check().map_err(|source| CallError::PartialContext {
                method: method.to_string(),
                source,
            })?;
        }
        let ctx = match kind {
            Kind::System => ctx,
            Kind::Declared => {
                Some(ctx.unwrap_or_else(|| PluginCallContext::daemon(self.next_request_id())))
            }
            Kind::Tool => match ctx {
                Some(c) if c.is_agent_call() => Some(c),
                _ => {
                    return Err(CallError::ToolNeedsAgentContext {
                        method: method.to_string(),
                    })
                }
            },
            Kind::Hook(_) => match ctx {
                Some(c) if c.is_agent_call() => Some(c),
                _ => {
                    return Err(CallError::HookNeedsAgentContext {
                        method: method.to_string(),
                    })
                }
            },
        };
        let params = match (ctx.as_ref(), params) {
            (None, p) => p,
            (Some(c), p @ (None | Some(Value::Object(_)) | Some(Value::Null))) => {
                Some(inject_context(p, c))
            }
            (Some(_), Some(_)) => {
                return Err(CallError::ParamsNotObject {
                    method: method.to_string(),
                })
            }
        };
        match kind {
            Kind::Hook(h) => {
                self.call_hook(
                    h,
                    params,
                    ctx.unwrap_or_else(|| PluginCallContext::daemon("")),
                )
                .await
            }
            _ => self.call_method(method, params, ctx, budget).await,
        }
    }

    async fn call_method(
        &self,
        method: &str,
        params: Option<Value>,
        ctx: Option<PluginCallContext>,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        let request_id = || ctx.as_ref().map(|c| c.request_id.clone());
        let audit = self.audit();
        audit.emit_with(AuditEvent::MethodCalled, self.name(), || {
            json!({
                "method": method,
                "request_id": request_id(),
                "user_id": ctx.as_ref().and_then(|c| c.operator_id.clone()),
                "project": ctx.as_ref().and_then(|c| c.project_id.clone()),
            })
        });
        // The clock is read only for the audit's duration.
        let start = audit.is_active().then(Instant::now);
        let r = self.connection().request(method, params, timeout).await;
        audit.emit_with(AuditEvent::MethodReturned, self.name(), || {
            let duration_ms = start.map_or(0, |s| s.elapsed().as_millis() as u64);
            let mut data = json!({
                "method": method,
                "request_id": request_id(),
                "duration_ms": duration_ms,
                "success": r.is_ok(),
            });
            if let Err(e) = &r {
                data["error"] = Value::String(e.to_string());
            }
            data
        });
        if let Err(RequestError::Timeout(_)) = r {
            self.kill("request_timeout").await;
        }
        r.map_err(|e| CallError::from_request(method, e))
    }

    async fn call_hook(
        &self,
        hook: HookName,
        params: Option<Value>,
        ctx: PluginCallContext,
    ) -> Result<Value, CallError> {
        let _serial = self.hook_lock().lock().await;
        let audit = |e, data| self.audit().emit(e, self.name(), data);
        audit(
            AuditEvent::HookFired,
            json!({"hook": hook.as_str(), "agent_path": ctx.agent_path,
                   "session_id": ctx.session_id, "request_id": ctx.request_id}),
        );
        let start = Instant::now();
        let timeout = self.timeouts().hook;
        let method = hook.method().to_string();
        match self.connection().request(&method, params, timeout).await {
            Ok(v) => {
                let has_result = !(v.is_null() || v.as_object().is_some_and(|o| o.is_empty()));
                audit(
                    AuditEvent::HookReturned,
                    json!({"hook": hook.as_str(), "duration_ms": start.elapsed().as_millis() as u64,
                           "has_result": has_result}),
                );
                Ok(v)
            }
            Err(RequestError::Timeout(after)) => {
                audit(
                    AuditEvent::HookTimeout,
                    json!({"hook": hook.as_str(), "agent_path": ctx.agent_path,
                           "timeout_sec": after.as_secs_f64()}),
                );
                Err(CallError::Timeout { method, after })
            }
            Err(e) => {
                let (code, message) = match &e {
                    RequestError::Rpc(r) => (r.code, r.message.clone()),
                    other => (ErrorCode::InternalError.code(), other.to_string()),
                };
                audit(
                    AuditEvent::HookFailed,
                    json!({"hook": hook.as_str(), "agent_path": ctx.agent_path,
                           "error_code": code, "error_message": message}),
                );
                Err(CallError::from_request(&method, e))
            }
        }
    }

    /// Health check: `ping` with the ping timeout (5 s scaled); `Ok` when the
    /// answer is `{"status": "ok"}`. Not audited and never kills (the
    /// supervisor counts failures).
    pub async fn ping(&self) -> Result<(), CallError> {
        let method = methods::PING.to_string();
        match self
            .connection()
            .request(&method, None, self.timeouts().ping)
            .await
        {
            Ok(v) => match serde_json::from_value::<StatusOk>(v.clone()) {
                Ok(s) if s.status == "ok" => Ok(()),
                _ => Err(CallError::BadPing(v)),
            },
            Err(e) => Err(CallError::from_request(&method, e)),
        }
    }
}
