//! JUnit XML output (for CI test report publishers), via `quick-junit`.

use quick_junit::{
    NonSuccessKind, Property, Report as JReport, TestCase, TestCaseStatus, TestSuite,
};

use super::{Report, Status};

/// Render the report as JUnit XML: one test suite named after the plugin,
/// one test case per conformance case; a warning is a passing case with a
/// `system-out` note. A failure or skip's `type` is its kind; `caused_by`
/// and `ended_by` are properties of the test case.
pub fn render_junit(report: &Report) -> String {
    let mut suite = TestSuite::new(format!("kaged-conformance: {}", report.plugin.name));
    suite.add_property(Property::new(
        "plugin.version",
        report.plugin.version.clone(),
    ));
    suite.add_property(Property::new("time_scale", report.time_scale.to_string()));
    if let Some(cage) = report.cage {
        suite.add_property(Property::new("cage", cage.as_str()));
        if let Some(line) = report.cage_line() {
            suite.add_property(Property::new("cage_policy", line));
        }
    }
    if let Some(t) = &report.timeouts {
        suite.add_property(Property::new("effective_timeouts", t.describe()));
    }
    for c in &report.cases {
        let status = match c.status {
            Status::Pass | Status::Warn => TestCaseStatus::success(),
            Status::Skip => {
                let mut s = TestCaseStatus::skipped();
                s.set_message(c.detail.clone());
                if let Some(k) = c.kind {
                    s.set_type(k.as_str());
                }
                s
            }
            Status::Fail => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                let root = c
                    .caused_by
                    .as_ref()
                    .map(|r| format!(" (follows from {r})"))
                    .unwrap_or_default();
                // What broke, first (CI summaries show the message only);
                // the rule it breaks after the whole detail.
                let first = c.detail.lines().next().unwrap_or_default();
                s.set_message(format!("{first}{root}"));
                s.set_description(format!(
                    "{}\n\n{} rule broken: {}",
                    c.detail,
                    c.level.as_str(),
                    c.spec
                ));
                if let Some(k) = c.kind {
                    s.set_type(k.as_str());
                }
                s
            }
        };
        let mut tc = TestCase::new(c.id.clone(), status);
        tc.set_classname(c.id.split('.').next().unwrap_or("case").to_string());
        tc.set_time(std::time::Duration::from_millis(c.duration_ms));
        if c.status == Status::Warn {
            let kind = c
                .kind
                .map(|k| format!(", {}", k.as_str()))
                .unwrap_or_default();
            tc.set_system_out(format!(
                "warning ({}{kind}): {}",
                c.level.as_str(),
                c.detail
            ));
        }
        if let Some(root) = &c.caused_by {
            tc.add_property(Property::new("caused_by", root.clone()));
        }
        if let Some(e) = c.ended_by {
            tc.add_property(Property::new("ended_by", e.as_str()));
        }
        suite.add_test_case(tc);
    }
    let mut jr = JReport::new("kaged-conformance");
    jr.add_test_suite(suite);
    jr.to_string()
        .unwrap_or_else(|e| format!("<!-- could not render JUnit: {e} -->\n"))
}
