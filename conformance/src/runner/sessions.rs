//! Getting sessions: the shared session most cases use, fresh spawns for
//! cases that could poison it, and retiring a spawn without leaking a
//! process.

use std::time::Duration;

use kaged_host_sim::time::REAP_POLL;
use kaged_host_sim::{
    group_alive, HostConfig, HostSim, LaunchError, PluginSession, RequestError, Transcript,
};
use kaged_plugin_sdk::protocol::{methods, InitializeParams, API_VERSION};
use serde_json::json;

use super::case::Scope;
use super::suite::{Mode, Suite};

/// The `daemon_version` the suite announces.
pub(crate) const DAEMON_VERSION: &str = concat!("kaged-conformance/", env!("CARGO_PKG_VERSION"));

impl Suite<'_> {
    /// A host writing to the run's audit log and to `transcript`, with the
    /// run's storage broker.
    pub fn host(&self, transcript: Transcript) -> HostSim {
        HostSim::new(HostConfig {
            time_scale: self.opts.time_scale,
            audit: self.audit.clone(),
            transcript,
            daemon_version: DAEMON_VERSION.to_string(),
            handler: self.storage.clone(),
            storage_available: true,
            ..HostConfig::default()
        })
    }

    /// The `initialize` params a host would send this plugin.
    pub fn init_params(&self) -> InitializeParams {
        InitializeParams {
            daemon_version: DAEMON_VERSION.to_string(),
            api_version: API_VERSION,
            plugin_name: self
                .manifest
                .as_ref()
                .map(|m| m.name.clone())
                .unwrap_or_default(),
            storage_available: true,
            projects: Vec::new(),
        }
    }

    /// Spawn without any handshake (the transcript is added to `scope`).
    pub async fn spawn_unready(&mut self, scope: &mut Scope) -> Result<PluginSession, String> {
        let t = self.new_transcript();
        scope.touch_from(&t, 0);
        let host = self.host(t);
        host.launch_lenient(&self.dir)
            .await
            .map_err(|e| describe_launch(&e))
    }

    /// A fresh, ready session for one case (strict or lenient handshake as
    /// the mode says); `Err` explains why there is none.
    pub async fn fresh(&mut self, scope: &mut Scope) -> Result<PluginSession, String> {
        match self.mode.clone() {
            Mode::Unavailable(why) => Err(why),
            Mode::Strict => {
                let t = self.new_transcript();
                scope.touch_from(&t, 0);
                let host = self.host(t);
                host.launch(&self.dir)
                    .await
                    .map_err(|e| describe_launch(&e))
            }
            Mode::Lenient => {
                let s = self.spawn_unready(scope).await?;
                match lenient_handshake(&s, self.init_params(), self.timeouts().initialize).await {
                    Ok(()) => Ok(s),
                    Err(e) => {
                        retire(s).await;
                        Err(e)
                    }
                }
            }
        }
    }

    /// The shared session, (re)started when there is none or it ended.
    pub async fn shared(&mut self, scope: &mut Scope) -> Result<&PluginSession, String> {
        let alive = self
            .shared
            .as_ref()
            .is_some_and(|(s, _)| s.is_running() && s.exit_info().is_none());
        if !alive {
            if let Some((old, _)) = self.shared.take() {
                retire(old).await;
            }
            let t = self.new_transcript();
            scope.touch_from(&t, 0);
            let s = match self.mode.clone() {
                Mode::Unavailable(why) => return Err(why),
                Mode::Strict => self
                    .host(t.clone())
                    .launch(&self.dir)
                    .await
                    .map_err(|e| describe_launch(&e))?,
                Mode::Lenient => {
                    let s = self
                        .host(t.clone())
                        .launch_lenient(&self.dir)
                        .await
                        .map_err(|e| describe_launch(&e))?;
                    if let Err(e) =
                        lenient_handshake(&s, self.init_params(), self.timeouts().initialize).await
                    {
                        retire(s).await;
                        return Err(e);
                    }
                    s
                }
            };
            self.shared = Some((s, t));
        }
        match &self.shared {
            Some((s, _)) => Ok(s),
            None => Err("no session".into()),
        }
    }

    /// Shut the shared session down, if any.
    pub async fn close_shared(&mut self) {
        if let Some((s, _)) = self.shared.take() {
            retire(s).await;
        }
    }
}

/// `initialize` through the raw channel, accepting any answer (result or
/// error), then `initialized`.
pub(crate) async fn lenient_handshake(
    s: &PluginSession,
    params: InitializeParams,
    timeout: Duration,
) -> Result<(), String> {
    let raw = s.raw();
    let params = serde_json::to_value(params).map_err(|e| e.to_string())?;
    match raw
        .request(methods::INITIALIZE, Some(params), timeout)
        .await
    {
        Ok(_) | Err(RequestError::Rpc(_)) => {}
        Err(e) => {
            return Err(format!(
                "no usable initialize answer even with a lenient handshake: {e}"
            ))
        }
    }
    raw.send_value(&json!({"jsonrpc": "2.0", "method": methods::INITIALIZED, "params": {}}));
    Ok(())
}

/// End a spawn: a graceful shutdown when it still runs (bounded by the
/// scaled shutdown ladder), then make sure its process group is gone.
/// Returns a note when something had to be forced.
pub(crate) async fn retire(s: PluginSession) -> Option<String> {
    if s.is_running() {
        s.shutdown().await;
    }
    let pgid = s.pid()?;
    let limit = s.timeouts().sigterm_grace.max(Duration::from_millis(500));
    let deadline = tokio::time::Instant::now() + limit;
    while group_alive(pgid) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(REAP_POLL).await;
    }
    if group_alive(pgid) {
        s.kill("conformance: process group survived the session")
            .await;
        drop(s);
        return Some(format!(
            "process group {pgid} was still alive after the session ended"
        ));
    }
    None
}

/// One line for a launch failure, classified.
pub(crate) fn describe_launch(e: &LaunchError) -> String {
    use kaged_host_sim::SpawnError;
    match e {
        LaunchError::InvalidManifest { report, .. } => format!("invalid manifest: {report}"),
        LaunchError::Spawn { source, .. } => match source {
            SpawnError::NotFound { path } => {
                format!("not found: {} does not exist", path.display())
            }
            SpawnError::NotExecutable { path } => format!("not executable: {}", path.display()),
            SpawnError::EmptyCommand => "the manifest's command is empty".into(),
            other => format!("cannot start: {}", chain(other)),
        },
        LaunchError::ExitedAtOnce { exit, stderr, .. } => format!(
            "exits at once ({}); last stderr: {}",
            describe_exit(exit.map(|e| (e.code, e.signal))),
            if stderr.is_empty() {
                "(none)".to_string()
            } else {
                stderr.join(" | ")
            }
        ),
        LaunchError::Handshake { source, .. } => format!("handshake failed: {source}"),
    }
}

/// `exit code N`, `signal N` or `unknown exit`.
pub(crate) fn describe_exit(e: Option<(Option<i32>, Option<i32>)>) -> String {
    match e {
        Some((Some(c), _)) => format!("exit code {c}"),
        Some((None, Some(s))) => format!("killed by signal {s}"),
        _ => "exit status unknown".into(),
    }
}

/// An error and its causes on one line.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}
