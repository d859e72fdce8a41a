//! `manifest.*`: the host's validator over `kaged-plugin.yaml`. Errors
//! fail `manifest.valid`; warnings make `manifest.no_warnings` warn.

use std::sync::Arc;

use kaged_host_sim::validate::validate_dir;

use super::{Suite, Verdict};

/// Run the manifest cases; `false` when the manifest is unusable.
pub(crate) async fn run(suite: &mut Suite<'_>) -> bool {
    let report = validate_dir(&suite.dir);
    let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
    let warnings: Vec<String> = report.warnings().map(ToString::to_string).collect();
    let usable = errors.is_empty() && report.manifest.is_some();
    if let Some(m) = &report.manifest {
        suite.manifest = Some(Arc::new(m.clone()));
    }
    let valid = if usable {
        Verdict::pass(format!(
            "kaged-plugin.yaml validates ({} warning(s))",
            warnings.len()
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
    };
    suite.record("manifest.valid", "manifest.valid", valid);
    let no_warn = if !usable {
        Verdict::skip("the manifest is invalid (see manifest.valid)")
    } else if warnings.is_empty() {
        Verdict::pass("no warnings")
    } else {
        Verdict::fail(format!(
            "expected: no warnings; actual: {} warning(s):\n{}",
            warnings.len(),
            warnings.join("\n")
        ))
    };
    suite.record("manifest.no_warnings", "manifest.no_warnings", no_warn);
    if !usable {
        // The report still names the plugin when the model parsed.
        suite.manifest = report.manifest.map(Arc::new);
    }
    usable
}
