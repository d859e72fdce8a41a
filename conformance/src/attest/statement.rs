//! [`statement`]: the in-toto Statement of a finished run.

use std::path::Path;

use serde_json::{json, Value};

use super::tree::{self, AttestError};
use super::{PREDICATE_TYPE, STATEMENT_TYPE, TREE_ALGORITHM};
use crate::report::{Outcome, Report, Status};

/// The statement certifying the plugin in `dir` as `report` judged it.
/// `outcome` is the certification's when the run had a policy, else
/// `passed` or `failed` by the report's exit status.
pub fn statement(dir: &Path, report: &Report) -> Result<Value, AttestError> {
    let (digest, _) = tree::installed_digest(dir)?;
    let outcome = match &report.certification {
        Some(c) if c.outcome == Outcome::Certified => "certified",
        Some(_) => "not_certified",
        None if report.exit_code(false) == 0 => "passed",
        None => "failed",
    };
    let cases: Vec<Value> = report
        .cases
        .iter()
        .map(|c| json!({"id": c.id, "level": c.level.as_str(), "status": c.status.as_str()}))
        .collect();
    let s = report.summary;
    Ok(json!({
        "_type": STATEMENT_TYPE,
        "subject": [{
            "name": format!("{}@{}", report.plugin.name, report.plugin.version),
            "digest": {"sha256": digest},
        }],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "kit": {"name": "kaged-conformance", "version": env!("CARGO_PKG_VERSION")},
            "plugin": {"name": report.plugin.name, "version": report.plugin.version},
            "subject_digest": {"algorithm": TREE_ALGORITHM, "of": "the installed copy, as `plugin install` makes it"},
            "outcome": outcome,
            "policy": report.certification.as_ref().map(|c| json!({
                "name": c.policy.name, "version": c.policy.version, "sha256": c.policy.sha256,
            })),
            "reasons": report.certification.as_ref().map_or_else(Vec::new, |c| c.reasons.clone()),
            "cage": {
                "kind": report.cage.map(|k| k.as_str()),
                "line": report.cage_line(),
                "policy": report.cage_policy,
            },
            "host": host_facts(),
            "time_scale": report.time_scale,
            "summary": {"passed": s.passed, "failed": s.failed, "warned": s.warned, "skipped": s.skipped},
            "cases": cases,
            "must_failures": report.cases.iter().filter(|c| c.status == Status::Fail).count(),
        },
    }))
}

/// The host facts a verdict depends on: the kernel, bwrap's version.
fn host_facts() -> Value {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let bwrap = std::process::Command::new("bwrap")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    json!({
        "kernel": kernel,
        "arch": std::env::consts::ARCH,
        "bwrap": bwrap,
    })
}
