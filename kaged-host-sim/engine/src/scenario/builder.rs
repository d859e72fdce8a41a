//! [`Scenario`]: a script built in Rust and run against a plugin directory
//! on a fresh host, giving the outcomes and the normal-form transcript a
//! snapshot test compares ([`assert_transcript_snapshot!`](crate::assert_transcript_snapshot)).
//!
//! ```no_run
//! use kaged_host_engine::scenario::Scenario;
//! use serde_json::json;
//! # fn demo(dir: &std::path::Path) {
//! let run = Scenario::new()
//!     .call("echo.say", json!({"text": "hi"}))
//!     .calls([("echo.say", json!({"text": "a"})), ("echo.say", json!({"text": "b"}))])
//!     .run_blocking(dir)
//!     .expect("the scenario runs");
//! run.assert_ok();
//! println!("{}", run.transcript.to_jsonl());
//! # }
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kaged_plugin_protocol::PluginCallContext;
use serde_json::Value;

use super::{
    run_steps, CallStep, CallsStep, NotifyStep, Script, SessionStep, StepOutcome, WaitStep,
};
use kaged_host_core::audit::AuditLog;
use kaged_host_core::normal::{self, NormalOptions, NormalTranscript};
use kaged_host_core::time::{TimeScale, Timeouts};
use kaged_host_core::transcript::Transcript;
use kaged_host_core::CageMode;
use kaged_host_core::ShutdownOutcome;
use kaged_host_core::{HostConfig, HostSim, LaunchError};
use kaged_host_storage::BrokerError;
use kaged_host_storage::BrokerHandler;

/// A scenario: steps, and how the host runs them.
#[derive(Debug, Clone)]
pub struct Scenario {
    script: Script,
    time_scale: TimeScale,
    adjust_timeouts: Option<fn(Timeouts) -> Timeouts>,
    keep_stderr: bool,
    cage: CageMode,
    config_root: Option<PathBuf>,
}

impl Default for Scenario {
    fn default() -> Scenario {
        Scenario {
            script: Script::default(),
            time_scale: TimeScale::FULL,
            adjust_timeouts: None,
            keep_stderr: false,
            cage: CageMode::Auto,
            config_root: None,
        }
    }
}

/// Why a scenario could not run.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The storage broker's temporary database cannot be created.
    #[error("cannot create the storage database")]
    Storage(#[source] BrokerError),
    /// The plugin did not start.
    #[error("cannot start the plugin")]
    Launch(#[source] Box<LaunchError>),
    /// The async runtime could not start.
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
}

/// What a scenario run showed.
#[derive(Debug)]
pub struct ScenarioRun {
    /// Each step's outcome, in order.
    pub outcomes: Vec<StepOutcome>,
    /// How the plugin ended after the last step.
    pub shutdown: ShutdownOutcome,
    /// The normal-form transcript.
    pub transcript: NormalTranscript,
    /// The run's audit log.
    pub audit: AuditLog,
}

impl ScenarioRun {
    /// Each failed step, as `step N: what happened` (from 1).
    pub fn failed_steps(&self) -> Vec<String> {
        self.outcomes
            .iter()
            .enumerate()
            .filter(|(_, o)| !o.ok)
            .map(|(i, o)| format!("step {}: {}", i + 1, o.line))
            .collect()
    }

    /// Panic, listing them, when a step failed or the plugin did not exit
    /// cleanly.
    pub fn assert_ok(&self) {
        let failed = self.failed_steps();
        assert!(
            failed.is_empty(),
            "scenario steps failed:\n{}",
            failed.join("\n")
        );
        assert!(
            self.shutdown.is_clean(),
            "the plugin did not exit cleanly: {}",
            self.shutdown
        );
    }
}

impl Scenario {
    /// An empty scenario (time scale 1, cage `auto`).
    pub fn new() -> Scenario {
        Scenario::default()
    }

    /// A scenario running `script`.
    pub fn from_script(script: Script) -> Scenario {
        Scenario {
            script,
            ..Scenario::default()
        }
    }

    /// Add a step (any [`SessionStep`], or a step struct such as
    /// [`ExpectAuditStep`](super::ExpectAuditStep)).
    pub fn step(mut self, step: impl Into<SessionStep>) -> Scenario {
        self.script.steps.push(step.into());
        self
    }

    /// Call `method` with `params` (daemon-level: no `_context`).
    pub fn call(self, method: &str, params: Value) -> Scenario {
        self.step(CallStep {
            params: Some(params),
            ..CallStep::new(method)
        })
    }

    /// Call `method` with `params` as `ctx` (an agent's call, a tool).
    pub fn call_as(self, method: &str, params: Value, ctx: PluginCallContext) -> Scenario {
        self.step(CallStep {
            params: Some(params),
            context: Some(ctx),
            ..CallStep::new(method)
        })
    }

    /// Send these calls at once; they may be answered in any order.
    pub fn calls<'a>(self, calls: impl IntoIterator<Item = (&'a str, Value)>) -> Scenario {
        let calls = calls
            .into_iter()
            .map(|(m, p)| CallStep {
                params: Some(p),
                ..CallStep::new(m)
            })
            .collect();
        self.step(CallsStep { calls })
    }

    /// Send the notification `method`.
    pub fn notify(self, method: &str, params: Value) -> Scenario {
        self.step(NotifyStep {
            notify: method.to_string(),
            params: Some(params),
        })
    }

    /// Wait for the plugin's notification `method`.
    pub fn wait(self, method: &str) -> Scenario {
        self.step(WaitStep {
            wait: method.to_string(),
            timeout_ms: None,
        })
    }

    /// Run at this time scale (ADDENDUM §10).
    pub fn time_scale(mut self, scale: TimeScale) -> Scenario {
        self.time_scale = scale;
        self
    }

    /// Set the timeouts after scaling, as a host's
    /// [`HostConfig::with_adjust_timeouts`] does (default `None`: each is
    /// the spec value × the time scale). The conformance suite passes its
    /// own, so that a session it runs waits as its cases do.
    pub fn adjust_timeouts(mut self, adjust: Option<fn(Timeouts) -> Timeouts>) -> Scenario {
        self.adjust_timeouts = adjust;
        self
    }

    /// Keep stderr lines in the transcript (after the messages).
    pub fn keep_stderr(mut self) -> Scenario {
        self.keep_stderr = true;
        self
    }

    /// Cage the plugin this way (ADDENDUM §13; default `auto`).
    pub fn cage(mut self, cage: CageMode) -> Scenario {
        self.cage = cage;
        self
    }

    /// The operator's config root (`config:/` grants resolve under it;
    /// default: none). It is `[config_root]` in the transcript.
    pub fn config_root(mut self, dir: &Path) -> Scenario {
        self.config_root = Some(dir.to_path_buf());
        self
    }

    /// The script this scenario runs.
    pub fn script(&self) -> &Script {
        &self.script
    }

    /// Launch the plugin in `dir` on a fresh host (brokered storage in a
    /// temporary database), run the steps, shut it down.
    pub async fn run(&self, dir: &Path) -> Result<ScenarioRun, ScenarioError> {
        let audit = AuditLog::memory();
        let transcript = Transcript::memory();
        let broker = BrokerHandler::temp().map_err(ScenarioError::Storage)?;
        let host = HostSim::new(
            HostConfig::default()
                .with_time_scale(self.time_scale)
                .with_adjust_timeouts(self.adjust_timeouts)
                .with_audit(audit.clone())
                .with_transcript(transcript.clone())
                .with_storage(Arc::new(broker))
                .with_cage(self.cage)
                .with_config_root(self.config_root.clone()),
        );
        let session = host
            .launch_with(dir, &self.script.config)
            .await
            .map_err(|e| ScenarioError::Launch(Box::new(e)))?;
        let outcomes = run_steps(&host, &session, &self.script, &mut |_, _| {}).await;
        let shutdown = session.shutdown().await;
        let mut opts = NormalOptions::for_plugin(dir);
        if let Some(root) = &self.config_root {
            opts.paths
                .insert(0, (root.display().to_string(), "[config_root]".into()));
        }
        opts.keep_stderr = self.keep_stderr;
        Ok(ScenarioRun {
            outcomes,
            shutdown,
            transcript: normal::of(&transcript, &opts),
            audit,
        })
    }

    /// [`Scenario::run`] on a runtime of its own (for `#[test]`s).
    pub fn run_blocking(&self, dir: &Path) -> Result<ScenarioRun, ScenarioError> {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(ScenarioError::Runtime)?
            .block_on(self.run(dir))
    }
}

/// Assert that a [`ScenarioRun`]'s steps succeeded and snapshot its
/// normal-form transcript with insta (the calling crate depends on
/// `insta` with its `json` feature).
///
/// ```ignore
/// let run = Scenario::new().call("echo.say", json!({"text": "hi"})).run_blocking(dir)?;
/// kaged_host_engine::assert_transcript_snapshot!("echo_say", run);
/// ```
#[macro_export]
macro_rules! assert_transcript_snapshot {
    ($name:expr, $run:expr $(,)?) => {{
        let run: &$crate::scenario::ScenarioRun = &$run;
        run.assert_ok();
        ::insta::assert_json_snapshot!($name, run.transcript.to_values());
    }};
}
