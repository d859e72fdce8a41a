//! `manifest.*`: the host's validator over `kaged-plugin.yaml`. Errors
//! fail `manifest.valid`; warnings make `manifest.no_warnings` warn.

use kaged_host_core::validate::ValidationReport;
use kaged_plugin_protocol::manifest::Manifest;

use crate::catalogue::MAX_TOOLS;
use crate::runner::judge::verdict::Verdict;

/// The manifest, when it validated without errors (the host refuses to
/// launch the plugin otherwise).
pub(crate) fn usable(report: &ValidationReport) -> Option<&Manifest> {
    report
        .manifest
        .as_ref()
        .filter(|_| report.errors().next().is_none())
}

/// `manifest.valid`: no validation error.
pub(crate) fn valid(report: &ValidationReport) -> Verdict {
    let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
    if usable(report).is_some() {
        Verdict::pass(format!(
            "kaged-plugin.yaml validates ({} warning(s))",
            report.warnings().count()
        ))
    } else if errors.is_empty() {
        Verdict::fail(
            "expected: a manifest the model accepts; actual: the manifest could not be loaded",
        )
    } else {
        Verdict::fail(format!(
            "expected: no validation errors; actual: {} error(s):\n{}",
            errors.len(),
            errors.join("\n")
        ))
    }
}

/// `manifest.tool_count`: at most [`MAX_TOOLS`] tools, or a warning that
/// names both numbers.
pub(crate) fn tool_count(report: &ValidationReport) -> Verdict {
    let Some(m) = usable(report) else {
        return Verdict::blocked_by(
            &crate::catalogue::MANIFEST_VALID,
            "the manifest is invalid (see manifest.valid)",
        );
    };
    let n = m.tools.len();
    if n <= MAX_TOOLS {
        Verdict::pass(format!("{n} tool(s), at most {MAX_TOOLS}"))
    } else {
        Verdict::fail(format!(
            "expected: at most {MAX_TOOLS} tools; actual: {n} tools, each in the tool list of \
             every agent that declares the plugin: split the plugin, or fold related tools into \
             one with a parameter"
        ))
    }
}

/// `manifest.no_warnings`: no validation warning.
pub(crate) fn no_warnings(report: &ValidationReport) -> Verdict {
    let warnings: Vec<String> = report.warnings().map(ToString::to_string).collect();
    if usable(report).is_none() {
        Verdict::blocked_by(
            &crate::catalogue::MANIFEST_VALID,
            "the manifest is invalid (see manifest.valid)",
        )
    } else if warnings.is_empty() {
        Verdict::pass("no warnings")
    } else {
        Verdict::fail(format!(
            "expected: no warnings; actual: {} warning(s):\n{}",
            warnings.len(),
            warnings.join("\n")
        ))
    }
}
