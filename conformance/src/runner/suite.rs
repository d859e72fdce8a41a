//! The suite state and the case loop: begin a case (selection), end it
//! (level, baseline, audit events, transcript), stream it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use kaged_host_sim::{
    AuditLog, InFlight, InFlightWaiter, PluginRequestHandler, PluginSession, Timeouts, Transcript,
};
use kaged_plugin_sdk::manifest::Manifest;

use super::case::{file_name, Scope};
use super::handshake::Primary;
use super::{Options, Verdict};
use crate::catalogue::{self, Level};
use crate::report::{CaseResult, EffectiveTimeouts, PluginInfo, Report, Status};

/// How the cases after the handshake get a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `HostSim::launch`: the full, strict handshake.
    Strict,
    /// `launch_lenient` and a raw `initialize`/`initialized` exchange that
    /// accepts any answer (the strict handshake failed).
    Lenient,
    /// No session can be had; the reason.
    Unavailable(String),
}

/// How many transcript lines a failure shows.
const TAIL: usize = 8;
/// A transcript line shown in a failure is cut to this many chars.
const TAIL_CHARS: usize = 300;

/// The state of one run.
pub(crate) struct Suite<'a> {
    pub dir: PathBuf,
    pub opts: &'a Options,
    pub audit: AuditLog,
    pub all_transcripts: Vec<Transcript>,
    pub manifest: Option<Arc<Manifest>>,
    pub mode: Mode,
    pub primary: Option<Primary>,
    pub shared: Option<(PluginSession, Transcript)>,
    /// The run's storage broker (`--storage-db`, or a temporary database),
    /// shared by every spawn.
    pub storage: Arc<dyn PluginRequestHandler>,
    /// Waits for the plugin-to-host requests still being answered.
    pub in_flight: InFlightWaiter,
    results: Vec<CaseResult>,
    on_case: &'a mut dyn FnMut(&CaseResult),
}

impl<'a> Suite<'a> {
    pub fn new(
        dir: &Path,
        opts: &'a Options,
        storage: InFlight,
        on_case: &'a mut dyn FnMut(&CaseResult),
    ) -> Suite<'a> {
        Suite {
            dir: dir.to_path_buf(),
            opts,
            audit: AuditLog::memory(),
            all_transcripts: Vec::new(),
            manifest: None,
            mode: Mode::Unavailable("the manifest was not loaded".into()),
            primary: None,
            shared: None,
            in_flight: storage.waiter(),
            storage: Arc::new(storage),
            results: Vec::new(),
            on_case,
        }
    }

    /// The effective timeouts (the manifest's, or the spec defaults).
    pub fn timeouts(&self) -> Timeouts {
        match &self.manifest {
            Some(m) => Timeouts::for_manifest(m, self.opts.time_scale),
            None => Timeouts::defaults(self.opts.time_scale),
        }
    }

    /// Run every case.
    pub async fn run(&mut self) {
        if !super::manifest::run(self).await {
            self.skip_rest("the manifest is invalid: the host refuses to launch the plugin (see manifest.valid)");
            return;
        }
        super::launch::run(self).await;
        super::handshake::run(self).await;
        super::protocol::run(self).await;
        super::methods::run(self).await;
        super::hooks::run(self).await;
        super::lifecycle::run(self).await;
        // Observations cover everything the plugin did, so the last spawn
        // ends first (a message sent just before is still counted).
        self.close_shared().await;
        super::observe::run(self).await;
    }

    /// A fresh in-memory transcript, kept for the whole-run stderr scan.
    pub fn new_transcript(&mut self) -> Transcript {
        let t = Transcript::memory();
        self.all_transcripts.push(t.clone());
        t
    }

    /// Begin case `id` (of catalogue entry `base`); `None` (and a `skip`
    /// result) when the selection excludes it.
    pub fn begin(&mut self, base: &str, id: impl Into<String>) -> Option<Scope> {
        let id = id.into();
        let def = catalogue::find(base)?;
        let mut scope = Scope {
            id: id.clone(),
            def,
            start: Instant::now(),
            audit_mark: self.audit.len(),
            wires: Vec::new(),
            events: None,
        };
        if let Some(why) = self.opts.selection.excluded(&id) {
            self.end(scope, Verdict::skip(why));
            return None;
        }
        if let Some((_, t)) = &self.shared {
            scope.touch(t);
        }
        Some(scope)
    }

    /// Run a case whose verdict is already known.
    pub fn record(&mut self, base: &str, id: impl Into<String>, verdict: Verdict) {
        if let Some(scope) = self.begin(base, id) {
            self.end(scope, verdict);
        }
    }

    /// Skip every catalogue case not yet reported, with `reason`.
    pub fn skip_rest(&mut self, reason: &str) {
        for def in catalogue::CATALOGUE {
            let done = self
                .results
                .iter()
                .any(|r| r.id == def.id || r.id.starts_with(&format!("{}[", def.id)));
            if !done {
                self.record(def.id, def.id, Verdict::skip(reason));
            }
        }
    }

    /// Finish a case: apply its level and the baseline, collect its audit
    /// events and transcript, report it.
    pub fn end(&mut self, scope: Scope, verdict: Verdict) {
        let def = scope.def;
        let (mut status, mut detail) = match verdict {
            Verdict::Pass(d) => (Status::Pass, d),
            Verdict::Skip(d) => (Status::Skip, d),
            Verdict::Fail(d) if def.level == Level::Must => (Status::Fail, d),
            Verdict::Fail(d) => (Status::Warn, d),
        };
        if let Some(b) = self.opts.baseline.as_ref().filter(|b| b.lists(&scope.id)) {
            match status {
                Status::Fail | Status::Warn => {
                    status = Status::Warn;
                    detail = format!("known failure (listed in {}): {detail}", b.source);
                }
                Status::Pass => {
                    status = Status::Fail;
                    detail = format!(
                        "listed in {} as known-failing, but it now passes: remove it from {}",
                        b.source, b.source
                    );
                }
                Status::Skip => {}
            }
        }
        let events = scope
            .events
            .clone()
            .unwrap_or_else(|| self.audit.since(scope.audit_mark));
        let records = scope.records();
        if let Some(dir) = &self.opts.transcript_dir {
            let text: String = records
                .iter()
                .map(|r| format!("{}\n", r.to_json()))
                .collect();
            if let Err(e) = std::fs::write(dir.join(file_name(&scope.id)), text) {
                detail.push_str(&format!("\n(could not write the case's transcript: {e})"));
            }
        }
        let tail = records
            .iter()
            .skip(records.len().saturating_sub(TAIL))
            .map(|r| kaged_host_sim::transcript::cut(&r.to_json().to_string(), TAIL_CHARS))
            .collect();
        let result = CaseResult {
            id: scope.id,
            title: def.title.to_string(),
            level: def.level,
            spec: def.spec.to_string(),
            status,
            duration_ms: scope.start.elapsed().as_millis() as u64,
            detail,
            audit_events: events
                .iter()
                .map(|e| e.event.as_str().to_string())
                .collect(),
            sentence: def.sentence.to_string(),
            transcript_tail: tail,
        };
        (self.on_case)(&result);
        self.results.push(result);
    }

    /// The report of the run.
    pub fn into_report(self) -> Report {
        let fallback = || {
            self.dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let plugin = PluginInfo {
            name: self
                .manifest
                .as_ref()
                .map_or_else(fallback, |m| m.name.clone()),
            version: self
                .manifest
                .as_ref()
                .map(|m| m.version.clone())
                .unwrap_or_default(),
            dir: self.dir.display().to_string(),
        };
        let timeouts = EffectiveTimeouts::from_timeouts(&self.timeouts());
        Report::new(plugin, self.opts.time_scale.factor(), self.results).with_timeouts(timeouts)
    }
}
