//! Judging a stored run offline (`kaged-conformance judge DIR`): every
//! case whose verdict follows from the recorded audit log and wire records
//! alone (the whole-run observations: stdout noise, oversize lines, stderr
//! discipline, storage denials, notifications, protocol violations, the
//! plugin's own request ids, timing margins) is judged again by the same
//! function the live run used; every other case needs the plugin and is a
//! `skip` saying so. Selection and baselines apply as in a run.
//!
//! ```no_run
//! use kaged_conformance::runner::{judge_dir, Options};
//! let report = judge_dir("transcripts".as_ref(), &Options::default())?;
//! println!("{}", report.to_json());
//! # Ok::<(), kaged_conformance::runner::stored::StoredError>(())
//! ```

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use kaged_host_core::audit::AuditLog;
use kaged_plugin_protocol::manifest::Manifest;

use super::cases::CHECKS;
use super::judge::recorder::Recorder;
use super::judge::verdict::Verdict;
use super::options::Options;
use super::plan::check::{CaseFn, Stage};
use super::plan::expand::{plan, Planned};
use super::run::direct::rows;
use super::session::observations::{Budgets, Observations};
use super::stored::{self, StoredError};
use super::suite::INVALID_MANIFEST;
use crate::catalogue::CaseDef;
use crate::report::Report;

/// Why a case is not judged offline.
pub const NEEDS_THE_PLUGIN: &str =
    "judged live only: this case probes the plugin; a stored run cannot decide it";

/// The cases a stored run decides (the whole-run observations), in run
/// order; `judge` skips every other case with [`NEEDS_THE_PLUGIN`].
///
/// ```
/// let ids: Vec<&str> = kaged_conformance::runner::judged_offline().iter().map(|c| c.id).collect();
/// assert!(ids.contains(&"protocol.no_unknown_response_ids"));
/// assert!(!ids.contains(&"protocol.ping"));
/// ```
pub fn judged_offline() -> Vec<&'static CaseDef> {
    CHECKS
        .iter()
        .filter(|c| matches!(c.run, CaseFn::Observed(_)))
        .map(|c| c.case)
        .collect()
}

/// Judge the stored run in `dir` (written by `run --transcript-dir`) with
/// `options`' selection and baseline.
pub fn judge_dir(dir: &Path, options: &Options) -> Result<Report, StoredError> {
    let loaded = stored::read(dir)?;
    let run = loaded.run;
    let manifest = match &run.manifest {
        None => None,
        Some(yaml) => Some(
            Manifest::from_yaml_str(yaml).map_err(|e| StoredError::Malformed {
                path: dir.join(stored::RUN_FILE),
                line: 1,
                message: format!("its manifest does not parse: {e}"),
            })?,
        ),
    };
    let options = Options {
        transcript_dir: None,
        ..options.clone()
    };
    let mut quiet = |_: &crate::report::CaseResult| {};
    let plugin_dir = std::path::PathBuf::from(&run.plugin.dir);
    let mut rec = Recorder::new(&options, &plugin_dir, AuditLog::discard(), &mut quiet);
    match manifest {
        None => {
            for check in rows(Stage::Validated) {
                rec.record(
                    check.case,
                    check.case.id.to_string(),
                    Verdict::skip_as(crate::catalogue::Kind::Unavailable, NEEDS_THE_PLUGIN),
                );
            }
            rec.skip_rest(INVALID_MANIFEST, &crate::catalogue::MANIFEST_VALID);
        }
        Some(m) => {
            let ms = |n: u64| Duration::from_millis(n);
            let budgets = Budgets {
                request: ms(run.timeouts.request_ms),
                first_config: ms(run.timeouts.first_config_ms),
                hook: ms(run.timeouts.hook_ms),
            };
            let o = Observations::stored(Arc::new(m), budgets, loaded.audit, loaded.wire);
            for stage in [
                Stage::Validated,
                Stage::Usable,
                Stage::Started,
                Stage::Ended,
            ] {
                for planned in plan(rows(stage), &o.manifest) {
                    match planned {
                        Planned::NoTarget(check, why) => {
                            rec.record(check.case, check.case.id.to_string(), Verdict::skip(why));
                        }
                        Planned::Run(check, target) => {
                            let id = target.case_id(check.case);
                            let CaseFn::Observed(f) = check.run else {
                                rec.record(
                                    check.case,
                                    id,
                                    Verdict::skip_as(
                                        crate::catalogue::Kind::Unavailable,
                                        NEEDS_THE_PLUGIN,
                                    ),
                                );
                                continue;
                            };
                            if let Some(mut scope) = rec.begin(check.case, id) {
                                let (v, events) = f(&o);
                                scope.attach_events(events);
                                rec.end(scope, v);
                            }
                        }
                    }
                }
            }
        }
    }
    let report = Report::new(run.plugin, run.time_scale, rec.into_results())
        .with_timeouts(run.timeouts)
        .with_cage(run.cage, run.cage_reason, run.cage_policy);
    Ok(report)
}
