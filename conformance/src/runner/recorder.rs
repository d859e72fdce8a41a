//! [`Recorder`]: collects the run's verdicts. It begins a case (or skips
//! it when the selection excludes it) and ends it: applies the case's
//! level and the baseline, collects its audit events and transcript
//! (writing the transcript to `--transcript-dir`), and streams the result.

use std::sync::Arc;

use kaged_host_sim::audit::AuditLog;
use kaged_host_sim::cage::CagePolicy;
use kaged_host_sim::normal::{normal_form, NormalOptions, TranscriptForm};
use kaged_host_sim::transcript::Direction;

use super::options::Options;
use super::scope::{file_name, Scope};
use super::verdict::Verdict;
use crate::catalogue::{CaseDef, Level, CATALOGUE};
use crate::report::{CaseResult, Status};
use crate::selection::STALE_DETAIL;

/// How many transcript lines a failure shows.
const TAIL: usize = 8;
/// A transcript line shown in a failure is cut to this many chars.
const TAIL_CHARS: usize = 300;

/// The verdicts of one run.
pub(crate) struct Recorder<'a> {
    options: &'a Options,
    /// The plugin directory (the normal form's `[plugin_dir]`).
    plugin_dir: std::path::PathBuf,
    audit: AuditLog,
    results: Vec<CaseResult>,
    on_case: &'a mut dyn FnMut(&CaseResult),
    /// The cage of a caged run: failures are diagnosed against it.
    cage: Option<Arc<CagePolicy>>,
}

impl<'a> Recorder<'a> {
    /// A recorder of a run with `options`, whose hosts audit to `audit`;
    /// `on_case` sees each result as it is recorded.
    pub fn new(
        options: &'a Options,
        plugin_dir: &std::path::Path,
        audit: AuditLog,
        on_case: &'a mut dyn FnMut(&CaseResult),
    ) -> Recorder<'a> {
        Recorder {
            options,
            plugin_dir: plugin_dir.to_path_buf(),
            audit,
            results: Vec::new(),
            on_case,
            cage: None,
        }
    }

    /// The run is caged with `policy`: a failing case whose plugin stderr
    /// shows an error the cage explains says so (`runner::diagnosis`).
    pub fn diagnose_with(&mut self, policy: Option<Arc<CagePolicy>>) {
        self.cage = policy;
    }

    /// Begin case `id` (of `case`); `None` (and a `skip` result) when the
    /// selection excludes it.
    pub fn begin(&mut self, case: &'static CaseDef, id: String) -> Option<Scope> {
        let scope = Scope::new(case, id, self.audit.len());
        if let Some(why) = self.options.selection.excluded(&scope.id) {
            self.end(scope, Verdict::skip(why));
            return None;
        }
        Some(scope)
    }

    /// Record a case whose verdict is already known.
    pub fn record(&mut self, case: &'static CaseDef, id: String, verdict: Verdict) {
        if let Some(scope) = self.begin(case, id) {
            self.end(scope, verdict);
        }
    }

    /// Skip every catalogue case not yet reported, with `reason`.
    pub fn skip_rest(&mut self, reason: &str) {
        for case in CATALOGUE {
            let done = self
                .results
                .iter()
                .any(|r| r.id == case.id || r.id.starts_with(&format!("{}[", case.id)));
            if !done {
                self.record(case, case.id.to_string(), Verdict::skip(reason));
            }
        }
    }

    /// Finish a case: apply its level and the baseline, collect its audit
    /// events and transcript, report it.
    pub fn end(&mut self, scope: Scope, verdict: Verdict) {
        let case = scope.case;
        let (mut status, mut detail) = match verdict {
            Verdict::Pass(d) => (Status::Pass, d),
            Verdict::Skip(d) => (Status::Skip, d),
            Verdict::Fail(d) if case.level == Level::Must => (Status::Fail, d),
            Verdict::Fail(d) => (Status::Warn, d),
        };
        if let Some(b) = self
            .options
            .baseline
            .as_ref()
            .filter(|b| b.lists(&scope.id))
        {
            match status {
                Status::Fail | Status::Warn => {
                    status = Status::Warn;
                    detail = format!("known failure (listed in {}): {detail}", b.source);
                }
                Status::Pass => {
                    status = Status::Warn;
                    detail = format!(
                        "{STALE_DETAIL}: listed in {} as known-failing, but it now passes: remove it from {}",
                        b.source, b.source
                    );
                }
                Status::Skip => {}
            }
        }
        let events = match scope.events() {
            Some(e) => e.to_vec(),
            None => self.audit.since(scope.audit_mark),
        };
        let records = scope.records();
        if let (Status::Fail | Status::Warn, Some(policy)) = (status, &self.cage) {
            let stderr: Vec<String> = records
                .iter()
                .filter(|r| r.dir == Direction::PluginStderr)
                .map(|r| {
                    r.msg
                        .as_str()
                        .map_or_else(|| r.msg.to_string(), str::to_string)
                })
                .collect();
            let why = super::diagnosis::diagnose(stderr.iter().map(String::as_str), policy);
            if let Some(why) = why.filter(|w| !detail.contains(w.as_str())) {
                detail.push('\n');
                detail.push_str(&why);
            }
        }
        if let Some(dir) = &self.options.transcript_dir {
            let text: String = match self.options.transcript_form {
                TranscriptForm::Raw => records
                    .iter()
                    .map(|r| format!("{}\n", r.to_json()))
                    .collect(),
                TranscriptForm::Normal => {
                    normal_form(&records, &[], &NormalOptions::for_plugin(&self.plugin_dir))
                        .to_jsonl()
                }
            };
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
            title: case.title.to_string(),
            level: case.level,
            spec: case.spec.to_string(),
            status,
            duration_ms: scope.start.elapsed().as_millis() as u64,
            detail,
            audit_events: events
                .iter()
                .map(|e| e.event.as_str().to_string())
                .collect(),
            sentence: case.sentence.to_string(),
            transcript_tail: tail,
        };
        (self.on_case)(&result);
        self.results.push(result);
    }

    /// The results, in the order they were recorded.
    pub fn into_results(self) -> Vec<CaseResult> {
        self.results
    }
}
