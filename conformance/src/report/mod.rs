//! The conformance report: the JSON object of ADDENDUM §11 and its
//! renderings (human, JUnit, TAP, Markdown, HTML).

mod certification;
mod ended;
mod escape;
mod html;
mod human;
#[cfg(feature = "junit")]
mod junit;
mod markdown;
mod tap;

use kaged_host_core::cage::CageSummary;
use kaged_host_core::CageKind;
use serde::{Deserialize, Serialize};

pub use certification::{Certification, Outcome, PluginInput, PolicyRef};
pub use ended::EndedBy;
#[cfg(feature = "cli")]
pub(crate) use escape::{escape_html, Html};
pub use html::render_html;
pub use human::{render_case_line, render_human, Folded};
#[cfg(feature = "junit")]
pub use junit::render_junit;
pub use markdown::render_markdown;
pub use tap::render_tap;

use crate::catalogue::{Kind, Level};

/// The `schema` member of every JSON report.
pub const REPORT_SCHEMA: &str = "kaged-conformance-report/v1";

/// A case's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The rule holds.
    Pass,
    /// A MUST rule is broken (or a baseline entry is stale).
    Fail,
    /// The case could not run; `detail` says why.
    Skip,
    /// A SHOULD rule is broken, or a known failure of the baseline.
    Warn,
}

impl Status {
    /// `pass`, `fail`, `skip` or `warn`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Skip => "skip",
            Status::Warn => "warn",
        }
    }
}

/// The plugin under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PluginInfo {
    /// The manifest's name (or the directory name when it has none).
    pub name: String,
    /// The manifest's version (empty when unknown).
    pub version: String,
    /// The plugin directory as given.
    pub dir: String,
}

/// Counts per status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// Cases skipped.
    pub skipped: usize,
    /// Cases that warned.
    pub warned: usize,
}

/// One case's outcome. The JSON form has the members of ADDENDUM §11
/// plus `kind`, `caused_by` and `ended_by` (consumers that only know §11
/// ignore them); the skipped members feed the human report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseResult {
    /// Dotted id, `x[name]` for parameterised cases.
    pub id: String,
    /// One-line title.
    pub title: String,
    /// MUST or SHOULD.
    pub level: Level,
    /// The spec section checked.
    pub spec: String,
    /// The verdict.
    pub status: Status,
    /// Wall time of the case.
    pub duration_ms: u64,
    /// What happened: expected vs actual, or why skipped.
    pub detail: String,
    /// Names of the audit events the host emitted during the case.
    pub audit_events: Vec<String>,
    /// Why the case did not pass (absent when it passed): one of [`KINDS`].
    /// An extension of the §11 object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    /// The id of the case whose failure this one follows from (absent for
    /// a root cause). An extension of the §11 object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caused_by: Option<String>,
    /// What ended the case's last wait on the plugin. An extension of the
    /// §11 object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<EndedBy>,
    /// The baseline (`--known-failing` file) that turned this case's
    /// failure into a warning, when one did. An extension of the §11
    /// object; a certifier's policy judges it (`crate::policy`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known_failure: Option<String>,
    /// The spec sentence the case checks (human report only).
    #[serde(skip)]
    pub sentence: String,
    /// The last wire transcript lines of the case (human report only).
    #[serde(skip)]
    pub transcript_tail: Vec<String>,
}

impl CaseResult {
    /// Whether `--only`/`--skip` left the case out (a skip of kind
    /// `deselected`): the human report counts these instead of listing
    /// them ([`Folded`]).
    pub fn deselected(&self) -> bool {
        self.kind == Some(crate::catalogue::Kind::Deselected)
    }
}

/// The effective (scaled) timeouts of the run, in milliseconds: ADDENDUM
/// §10, "Reports state the effective values". An extension of the §11
/// object (consumers that only know §11 ignore it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EffectiveTimeouts {
    /// Wait for the `initialize` answer.
    pub initialize_ms: u64,
    /// Wait for a method answer.
    pub request_ms: u64,
    /// Wait for the answer to the first `config.update`, right after the
    /// handshake (the request timeout, unless the run keeps it at its spec
    /// budget with `initialize`).
    pub first_config_ms: u64,
    /// Wait for a hook answer (`hook_timeout_sec`).
    pub hook_ms: u64,
    /// Wait for exit after `shutdown` (`shutdown_timeout_sec`).
    pub shutdown_ms: u64,
    /// Wait between SIGTERM and SIGKILL.
    pub sigterm_grace_ms: u64,
    /// Wait for a `ping` answer.
    pub ping_ms: u64,
}

impl EffectiveTimeouts {
    /// The values of the host-sim's timeouts.
    pub fn from_timeouts(t: &kaged_host_core::Timeouts) -> EffectiveTimeouts {
        let ms = |d: std::time::Duration| d.as_millis() as u64;
        EffectiveTimeouts {
            initialize_ms: ms(t.initialize),
            request_ms: ms(t.request),
            first_config_ms: ms(t.first_config),
            hook_ms: ms(t.hook),
            shutdown_ms: ms(t.shutdown),
            sigterm_grace_ms: ms(t.sigterm_grace),
            ping_ms: ms(t.ping),
        }
    }

    /// `initialize 10000 ms, request 30000 ms, ...` on one line.
    pub fn describe(&self) -> String {
        format!(
            "initialize {} ms, request {} ms, first config.update {} ms, hook {} ms, shutdown {} ms, sigterm grace {} ms, ping {} ms",
            self.initialize_ms, self.request_ms, self.first_config_ms, self.hook_ms, self.shutdown_ms, self.sigterm_grace_ms, self.ping_ms
        )
    }
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Always [`REPORT_SCHEMA`].
    pub schema: &'static str,
    /// The outcome under a certifier's policy (`run --policy`); absent
    /// without one. An extension of the §11 object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certification: Option<Certification>,
    /// The plugin under test.
    pub plugin: PluginInfo,
    /// The time scale in force.
    pub time_scale: f64,
    /// The effective timeouts (absent in reports built without a run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<EffectiveTimeouts>,
    /// How the plugin ran (ADDENDUM §13): `bwrap`, `unavailable` (bwrap
    /// cannot cage here; the plugin ran uncaged) or `off` (`--cage off`).
    /// An extension of the §11 object, absent in reports built without a
    /// run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cage: Option<CageKind>,
    /// Why the plugin ran uncaged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cage_reason: Option<String>,
    /// The cage's policy in brief (what the daemon's cage allows it), also
    /// when bwrap was unavailable; absent under `off`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cage_policy: Option<CageSummary>,
    /// Counts per status.
    pub summary: Summary,
    /// Every case, in run order.
    pub cases: Vec<CaseResult>,
}

impl Report {
    /// A report over these cases, with the summary computed.
    pub fn new(plugin: PluginInfo, time_scale: f64, cases: Vec<CaseResult>) -> Report {
        let mut summary = Summary::default();
        for c in &cases {
            match c.status {
                Status::Pass => summary.passed += 1,
                Status::Fail => summary.failed += 1,
                Status::Skip => summary.skipped += 1,
                Status::Warn => summary.warned += 1,
            }
        }
        Report {
            schema: REPORT_SCHEMA,
            certification: None,
            plugin,
            time_scale,
            timeouts: None,
            cage: None,
            cage_reason: None,
            cage_policy: None,
            summary,
            cases,
        }
    }

    /// The report stating these effective timeouts.
    pub fn with_timeouts(self, timeouts: EffectiveTimeouts) -> Report {
        Report {
            timeouts: Some(timeouts),
            ..self
        }
    }

    /// The report stating how the plugin ran.
    pub fn with_cage(
        self,
        cage: CageKind,
        reason: Option<String>,
        policy: Option<CageSummary>,
    ) -> Report {
        Report {
            cage: Some(cage),
            cage_reason: reason,
            cage_policy: policy,
            ..self
        }
    }

    /// One line saying how the plugin ran (`None` without a run): `cage:
    /// bwrap: ro ...; network none; ...`, or uncaged and why.
    pub fn cage_line(&self) -> Option<String> {
        let why = self.cage_reason.as_deref().unwrap_or("no reason given");
        Some(match self.cage? {
            CageKind::Bwrap => format!(
                "cage: bwrap: {}",
                self.cage_policy
                    .as_ref()
                    .map_or_else(|| "no policy".to_string(), CageSummary::line)
            ),
            CageKind::Unavailable => {
                format!("cage: unavailable, the plugin ran UNCAGED ({why})")
            }
            CageKind::Off => format!("cage: off, the plugin ran UNCAGED ({why})"),
        })
    }

    /// The exit status of ADDENDUM §11: 1 when a case failed (with
    /// `strict`, also when one warned), else 0. Under a policy, 1 unless
    /// certified, whatever the cases (a baseline cannot lower it).
    pub fn exit_code(&self, strict: bool) -> i32 {
        if let Some(c) = &self.certification {
            return i32::from(c.outcome != Outcome::Certified);
        }
        let failed = self.summary.failed > 0 || (strict && self.summary.warned > 0);
        i32::from(failed)
    }

    /// The ids of the cases that fail or warn (known failures of a
    /// baseline included, stale baseline entries not): what
    /// `--write-baseline` writes.
    pub fn failing_ids(&self) -> Vec<&str> {
        self.cases
            .iter()
            .filter(|c| match c.status {
                Status::Fail => true,
                Status::Warn => !c.detail.starts_with(crate::selection::STALE_DETAIL),
                Status::Pass | Status::Skip => false,
            })
            .map(|c| c.id.as_str())
            .collect()
    }

    /// The cases that failed or warned, each root cause followed by the
    /// cases that follow from it (directly or not), in run order
    /// otherwise: what the human and Markdown reports list.
    pub fn failures_root_first(&self) -> Vec<&CaseResult> {
        let notable: Vec<&CaseResult> = self
            .cases
            .iter()
            .filter(|c| matches!(c.status, Status::Fail | Status::Warn))
            .collect();
        let root_of = |c: &CaseResult| {
            let mut id = c.id.as_str();
            let mut seen = 0;
            while let Some(up) = self.case_by_id(id).and_then(|c| c.caused_by.as_deref()) {
                seen += 1;
                if seen > self.cases.len() {
                    break;
                }
                id = up;
            }
            id.to_string()
        };
        let mut out: Vec<&CaseResult> = Vec::with_capacity(notable.len());
        for root in notable.iter().filter(|c| c.caused_by.is_none()) {
            out.push(root);
            out.extend(
                notable
                    .iter()
                    .filter(|c| c.caused_by.is_some() && root_of(c) == root.id),
            );
        }
        for c in &notable {
            if !out.iter().any(|o| std::ptr::eq(*o, *c)) {
                out.push(c);
            }
        }
        out
    }

    fn case_by_id(&self, id: &str) -> Option<&CaseResult> {
        self.cases.iter().find(|c| c.id == id)
    }

    /// The JSON report.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}
