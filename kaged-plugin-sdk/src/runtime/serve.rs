//! The serving loop: read frames, answer the handshake and system methods,
//! spawn handlers, route host answers. The reader never waits on a handler.

use std::sync::Arc;

use futures_util::FutureExt;
use serde::Serialize;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::mpsc;

use super::builder::Plugin;
use super::host::{Host, Schema};
use crate::codec::{encode_line, EncodeError, Frame, LineReader, MAX_LINE_BYTES};
use crate::error::SdkError;
use crate::protocol::{
    methods, ErrorCode, Id, InitializeParams, InitializeResult, Notification, Request, Response,
    RpcError, RpcMessage, StatusOk, API_VERSION,
};

/// Why [`Plugin::serve`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServeExit {
    /// The host sent `shutdown` (as a notification or a request).
    Shutdown,
    /// The host closed our input.
    Eof,
}

/// What the serving loop does after a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Read the next frame (`request`: this one was a request).
    Next {
        /// Whether the frame was a request.
        request: bool,
    },
    /// Stop serving.
    Exit(ServeExit),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Waiting for `initialize`.
    Fresh,
    /// `initialize` answered, waiting for `initialized`; only
    /// `config.update` is served (ADDENDUM §12).
    Answered,
    /// Serving calls.
    Ready,
}

/// Encode a response; one over the line limit becomes a `-32603`
/// "response too large" error for the same id.
pub(crate) fn encode_response(resp: &Response) -> Vec<u8> {
    match encode_line(resp) {
        Ok(line) => line,
        Err(e) => {
            let detail = match e {
                EncodeError::TooLarge { len, limit } => {
                    format!("response too large: {len} bytes exceeds the {limit}-byte line limit")
                }
                EncodeError::Json(e) => format!("response could not be serialized: {e}"),
            };
            tracing::error!(id = %resp.id, "{detail}");
            let fallback = Response::err(
                resp.id.clone(),
                RpcError::new(ErrorCode::InternalError, detail),
            );
            encode_line(&fallback).unwrap_or_else(|_| b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"response too large\"}}\n".to_vec())
        }
    }
}

fn result_of<T: Serialize>(v: T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

impl Plugin {
    /// Serve the protocol over any reader/writer pair until `shutdown` or
    /// end of input. The author's shutdown handler has run and every answer
    /// is flushed when this returns. Used in-process by tests; [`Plugin::run`]
    /// serves stdio and exits the process.
    pub async fn serve<R, W>(&self, reader: R, writer: W) -> Result<ServeExit, SdkError>
    where
        R: AsyncRead + Unpin + Send,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        let writer_task = tokio::spawn(super::writer::write_loop(writer, rx));
        let host = Host::new(self.def.name.clone(), tx);
        let mut frames = LineReader::new(BufReader::with_capacity(64 * 1024, reader));
        let mut phase = Phase::Fresh;
        // On one thread (the default) a spawned handler would run on this
        // thread next anyway: `on_request` polls it once here first.
        let inline = tokio::runtime::Handle::current().runtime_flavor()
            == tokio::runtime::RuntimeFlavor::CurrentThread;
        let exit = loop {
            let frame = match frames.next_frame().await {
                Ok(Some(f)) => f,
                Ok(None) => break ServeExit::Eof,
                Err(e) => {
                    tracing::error!("reading from the host failed: {e}");
                    break ServeExit::Eof;
                }
            };
            match self.handle_frame(frame, &host, &mut phase, inline).await {
                Step::Exit(exit) => break exit,
                Step::Next { request: true } if !frames.get_ref().buffer().is_empty() => {
                    // More requests already read: let the handler and the
                    // writer run first, so this answer leaves now instead
                    // of with the whole read's (a pipelining host then works
                    // on answers while we work on requests).
                    YieldOnce(false).await;
                }
                Step::Next { .. } => {}
            }
        };
        if let Some(on_shutdown) = &self.def.on_shutdown {
            on_shutdown().await;
        }
        host.flush().await;
        host.fail_pending();
        drop(host);
        let _ = writer_task.await;
        Ok(exit)
    }

    /// Handle one frame from the host: answer what is wrong with it, route
    /// an answer to the request waiting for it, serve a notification or a
    /// request (`inline`: see [`Plugin::on_request`]).
    pub(super) async fn handle_frame(
        &self,
        frame: Frame,
        host: &Host,
        phase: &mut Phase,
        inline: bool,
    ) -> Step {
        let line = match frame {
            Frame::Line(l) => l,
            Frame::Oversize { len } => {
                tracing::warn!(len, "discarded a line over {MAX_LINE_BYTES} bytes");
                let err = RpcError::new(
                    ErrorCode::InvalidRequest,
                    format!("Invalid request: line of {len} bytes exceeds the {MAX_LINE_BYTES}-byte limit"),
                );
                let _ = host.send_line(encode_response(&Response::err(Id::null(), err)));
                return Step::Next { request: false };
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            return Step::Next { request: false };
        }
        let msg = match RpcMessage::from_slice(&line) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!("bad message from the host: {e}");
                let _ = host.send_line(encode_response(&e.answer()));
                return Step::Next { request: false };
            }
        };
        match msg {
            RpcMessage::Response(r) => {
                let id = r.id.as_u64();
                if !host.resolve(id, r.into_result()) {
                    tracing::warn!("answer for unknown request id {id:?} ignored");
                }
                Step::Next { request: false }
            }
            RpcMessage::Notification(n) => {
                if self.on_notification(n, host, phase).await {
                    Step::Exit(ServeExit::Shutdown)
                } else {
                    Step::Next { request: false }
                }
            }
            RpcMessage::Request(r) => {
                if self.on_request(r, host, phase, inline) {
                    Step::Exit(ServeExit::Shutdown)
                } else {
                    Step::Next { request: true }
                }
            }
        }
    }

    /// Handle a notification; true means shut down.
    async fn on_notification(&self, n: Notification, host: &Host, phase: &mut Phase) -> bool {
        match n.method.as_str() {
            methods::SHUTDOWN => return true,
            methods::INITIALIZED if *phase == Phase::Answered => {
                *phase = Phase::Ready;
                host.mark_ready();
                let storage = host.initialize_params().is_none_or(|p| p.storage_available);
                if self.def.migrations.is_some() && !storage {
                    // Nothing to migrate: every call the migrations gate
                    // gets this, and no storage request goes out.
                    host.set_schema(Schema::Failed(RpcError::new(
                        ErrorCode::StorageAccessDenied,
                        "storage is not available (initialize said storage_available: false): the schema migrations did not run",
                    )));
                } else if let Some(migrations) = self.def.migrations.clone() {
                    host.set_schema(Schema::Migrating);
                    let host = host.clone();
                    tokio::spawn(async move {
                        match migrations(host.clone()).await {
                            Ok(version) => {
                                tracing::debug!(version, "schema migrations done");
                                host.set_schema(Schema::Ready);
                            }
                            Err(e) => host.set_schema(Schema::Failed(e.into_rpc())),
                        }
                    });
                }
            }
            // Accepted once initialize is answered (ADDENDUM §12).
            methods::CONFIG_UPDATE if *phase != Phase::Fresh => {
                if let Some(cfg) = &self.def.config {
                    let (cfg, host, params) =
                        (Arc::clone(cfg), host.clone(), n.params.unwrap_or(json!({})));
                    tokio::spawn(async move {
                        if let Err(e) = cfg(strip_context(params), host).await {
                            tracing::error!("config.update rejected: {}", e.message);
                        }
                    });
                }
            }
            _ if *phase != Phase::Ready => {
                tracing::warn!(method = %n.method, "notification before the handshake completed, ignored");
            }
            methods::SYSTEM_RATE_LIMITED => {
                tracing::warn!(params = ?n.params, "the host dropped notifications (rate limited)");
            }
            other => {
                if let Some(route) = self.def.routes.get(other).cloned() {
                    let (host, method) = (host.clone(), other.to_owned());
                    tokio::spawn(async move {
                        if let Err(e) = host.schema_ready().await {
                            tracing::error!(%method, "notification not handled: {}", e.message);
                            return;
                        }
                        if let Err(e) = route.invoke(&method, n.params, host).await {
                            tracing::error!(%method, "notification handler failed: {}", e.message);
                        }
                    });
                } else {
                    tracing::debug!(method = other, "unhandled notification");
                }
            }
        }
        false
    }

    /// Handle a request (`inline`: poll a routed handler once before
    /// spawning it); true means a `shutdown` request was answered and the
    /// plugin must shut down.
    fn on_request(&self, r: Request, host: &Host, phase: &mut Phase, inline: bool) -> bool {
        let reply = |result: Result<Value, RpcError>| {
            let resp = match result {
                Ok(v) => Response::ok(r.id.clone(), v),
                Err(e) => Response::err(r.id.clone(), e),
            };
            let _ = host.send_line(encode_response(&resp));
        };
        match (r.method.as_str(), *phase) {
            (methods::INITIALIZE, Phase::Fresh) => {
                reply(self.initialize(host, r.params.clone()));
                if r.params.is_some() {
                    *phase = Phase::Answered;
                }
            }
            (methods::INITIALIZE, _) => reply(Err(RpcError::new(
                ErrorCode::InvalidRequest,
                "Invalid request: initialize was already received",
            ))),
            (methods::SHUTDOWN, _) => {
                reply(Ok(result_of(StatusOk::ok())));
                return true;
            }
            // The one call accepted between the initialize answer and
            // `initialized` (ADDENDUM §12); what its handler sends to the
            // host is held until `initialized`.
            (methods::CONFIG_UPDATE, Phase::Answered | Phase::Ready) => {
                let (cfg, host, id) = (self.def.config.clone(), host.clone(), r.id.clone());
                let params = strip_context(r.params.unwrap_or(json!({})));
                tokio::spawn(async move {
                    let result = match cfg {
                        Some(cfg) => cfg(params, host.clone())
                            .await
                            .map(|()| result_of(StatusOk::ok())),
                        None => Ok(result_of(StatusOk::ok())),
                    };
                    let resp = match result {
                        Ok(v) => Response::ok(id, v),
                        Err(e) => Response::err(id, e),
                    };
                    let _ = host.send_line(encode_response(&resp));
                });
            }
            (_, Phase::Fresh | Phase::Answered) => reply(Err(RpcError::new(
                ErrorCode::NotInitialized,
                format!(
                    "not initialized: `{}` arrived before the handshake completed",
                    r.method
                ),
            ))),
            (methods::PING, Phase::Ready) => reply(Ok(result_of(StatusOk::ok()))),
            (method, Phase::Ready) => match self.def.routes.get(method).cloned() {
                Some(route) => {
                    let (host, id, method, params) =
                        (host.clone(), r.id.clone(), r.method.clone(), r.params);
                    let mut call = Box::pin(async move {
                        let answer = match host.schema_ready().await {
                            Ok(()) => route.invoke(&method, params, host.clone()).await,
                            Err(e) => Err(e),
                        };
                        let resp = match answer {
                            Ok(v) => Response::ok(id, v),
                            Err(e) => Response::err(id, e),
                        };
                        let _ = host.send_line(encode_response(&resp));
                    });
                    // On one thread (the default) a spawned handler would run
                    // on this thread next anyway: poll it once here, and a
                    // handler that finishes without waiting answers without
                    // a task; one that waits (storage, a timer, I/O) goes on
                    // in its own task from where it stopped, so the reader
                    // never waits on it. With worker threads every handler
                    // is spawned, so that a computing one runs beside the
                    // reader.
                    if !inline || (&mut call).now_or_never().is_none() {
                        tokio::spawn(call);
                    }
                }
                None if method == methods::PROJECTS_ACTIVATED
                    || method == methods::PROJECTS_DEACTIVATED =>
                {
                    reply(Ok(result_of(StatusOk::ok())));
                }
                None => reply(Err(RpcError::new(
                    ErrorCode::MethodNotFound,
                    format!("Method not found: `{method}`"),
                ))),
            },
        }
        false
    }

    fn initialize(&self, host: &Host, params: Option<Value>) -> Result<Value, RpcError> {
        let Some(params) = params else {
            return Err(RpcError::new(
                ErrorCode::InvalidParams,
                "initialize needs params",
            ));
        };
        let p: InitializeParams = super::handler::decode(params, ErrorCode::InvalidParams)?;
        if p.plugin_name != self.def.name {
            tracing::warn!(expected = %self.def.name, got = %p.plugin_name, "the host loaded us under another name");
        }
        host.set_initialize_params(p.clone());
        if p.api_version != API_VERSION {
            tracing::warn!(
                ours = API_VERSION,
                host = p.api_version,
                "api_version differs from the host's"
            );
        }
        Ok(result_of(InitializeResult {
            name: self.def.name.clone(),
            version: self.def.version.clone().unwrap_or_default(),
            api_version: API_VERSION,
            methods: self.def.methods.clone(),
            notifications: self.def.notifications.clone(),
            capabilities_used: self.def.capabilities_used.clone(),
        }))
    }
}

/// Go to the back of the run queue once. Unlike `tokio::task::yield_now`,
/// which defers the wake until the runtime has polled its I/O driver (a
/// syscall), this wakes at once: the yield costs no syscall.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            std::task::Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    }
}

/// `config.update` params are the config object; drop a `_context` if a
/// host sent one.
fn strip_context(mut params: Value) -> Value {
    if let Some(o) = params.as_object_mut() {
        o.remove(crate::protocol::CONTEXT_KEY);
    }
    params
}
