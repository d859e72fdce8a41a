//! [`Recorder`]: collects the run's verdicts. It begins a case (or skips
//! it when the selection excludes it) and ends it: gathers the case's
//! evidence, judges it ([`finalize`]), writes its transcript to
//! `--transcript-dir` and streams the result.

use std::sync::Arc;

use kaged_host_core::audit::AuditLog;
use kaged_host_core::cage::CagePolicy;
use kaged_host_core::normal::{normal_form, NormalOptions, TranscriptForm};
use kaged_host_core::transcript::Direction;
use kaged_host_core::TranscriptRecord;

use super::diagnosis::{diagnose, CageDiagnosis};
use super::finalize::{finalize, Evidence, Finalized};
use super::roots::RootKey;
use super::scope::{file_name, Scope};
use super::verdict::Verdict;
use crate::catalogue::{CaseDef, Kind, CATALOGUE};
use crate::report::{CaseResult, Status};
use crate::runner::options::Options;

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
    /// The run's config root (`$KAGED_CONFIG_ROOT`), for diagnoses.
    config_root: Option<std::path::PathBuf>,
    /// Per result, what its failure would be the root of.
    roots: Vec<Option<RootKey>>,
    /// How many results failed so far.
    failed: usize,
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
            config_root: None,
            roots: Vec::new(),
            failed: 0,
        }
    }

    /// The run is caged with `policy`, `config:/` under `config_root`: a
    /// failing case whose plugin stderr or error answer shows an error the
    /// cage explains says so (`runner::judge::diagnosis`).
    pub fn diagnose_with(
        &mut self,
        policy: Option<Arc<CagePolicy>>,
        config_root: &std::path::Path,
    ) {
        self.cage = policy;
        self.config_root =
            Some(std::fs::canonicalize(config_root).unwrap_or_else(|_| config_root.to_path_buf()));
    }

    /// Begin case `id` (of `case`); `None` (and a `skip` result) when the
    /// selection excludes it or `--max-failures` is reached.
    pub fn begin(&mut self, case: &'static CaseDef, id: String) -> Option<Scope> {
        let scope = Scope::new(case, id, self.audit.len());
        match self.refusal(&scope.id) {
            Some(v) => {
                self.end(scope, v);
                None
            }
            None => Some(scope),
        }
    }

    /// Why case `id` is not run (a `skip` verdict): the selection excludes
    /// it, or `--max-failures` is reached.
    pub fn refusal(&self, id: &str) -> Option<Verdict> {
        if let Some(why) = self.options.selection.excluded(id) {
            return Some(Verdict::skip_as(Kind::Deselected, why));
        }
        match self.options.max_failures {
            Some(n) if self.failed >= n => Some(Verdict::skip_as(
                Kind::MaxFailures,
                format!("not run: --max-failures {n} reached"),
            )),
            _ => None,
        }
    }

    /// Record a case whose verdict is already known.
    pub fn record(&mut self, case: &'static CaseDef, id: String, verdict: Verdict) {
        if let Some(scope) = self.begin(case, id) {
            self.end(scope, verdict);
        }
    }

    /// Skip every catalogue case not yet reported, with `reason`: each
    /// could not run because `cause` failed.
    pub fn skip_rest(&mut self, reason: &str, cause: &CaseDef) {
        for case in CATALOGUE {
            let done = self
                .results
                .iter()
                .any(|r| r.id == case.id || r.id.starts_with(&format!("{}[", case.id)));
            if !done {
                self.record(
                    case,
                    case.id.to_string(),
                    Verdict::blocked_by(cause, reason),
                );
            }
        }
    }

    /// Finish a case: gather its evidence (audit events, transcript, what
    /// the cage explains), judge it ([`finalize`]), keep its transcript,
    /// report it.
    pub fn end(&mut self, scope: Scope, verdict: Verdict) {
        let records = scope.records();
        let evidence = Evidence {
            events: match scope.events() {
                Some(e) => e.to_vec(),
                None => self.audit.since(scope.audit_mark),
            },
            took: scope.took(),
            cage_in_answers: self.cage_diagnosis(&records, false),
            cage_in_output: self.cage_diagnosis(&records, true),
            records,
        };
        let Finalized { mut result, root } = finalize(
            scope.case,
            scope.id,
            verdict,
            &evidence,
            self.options.baseline.as_ref(),
        );
        if let Some(dir) = &self.options.transcript_dir {
            let text: String = match self.options.transcript_form {
                TranscriptForm::Raw => evidence
                    .records
                    .iter()
                    .map(|r| format!("{}\n", r.to_json()))
                    .collect(),
                TranscriptForm::Normal => normal_form(
                    &evidence.records,
                    &[],
                    &NormalOptions::for_plugin(&self.plugin_dir),
                )
                .to_jsonl(),
            };
            if let Err(e) = std::fs::write(dir.join(file_name(&result.id)), text) {
                result
                    .detail
                    .push_str(&format!("\n(could not write the case's transcript: {e})"));
            }
        }
        (self.on_case)(&result);
        if result.status == Status::Fail {
            self.failed += 1;
        }
        self.results.push(result);
        self.roots.push(root);
    }

    /// What the cage explains of a failure with these wire records: the
    /// messages of the plugin's error answers, and with `stderr` its
    /// stderr lines.
    fn cage_diagnosis(&self, records: &[TranscriptRecord], stderr: bool) -> Option<CageDiagnosis> {
        let policy = self.cage.as_ref()?;
        let lines: Vec<String> = records
            .iter()
            .filter_map(|r| match r.dir {
                Direction::PluginStderr if !stderr => None,
                Direction::PluginStderr => Some(
                    r.msg
                        .as_str()
                        .map_or_else(|| r.msg.to_string(), str::to_string),
                ),
                Direction::PluginToHost => r
                    .msg
                    .pointer("/error/message")
                    .and_then(|m| m.as_str())
                    .map(str::to_string),
                Direction::HostToPlugin => None,
            })
            .collect();
        diagnose(
            lines.iter().map(String::as_str),
            policy,
            self.config_root.as_deref(),
        )
    }

    /// The results, in the order they were recorded, each failure that
    /// follows from another linked to its root ([`super::roots::link`]).
    pub fn into_results(self) -> Vec<CaseResult> {
        let mut results = self.results;
        super::roots::link(&mut results, &self.roots);
        results
    }
}
