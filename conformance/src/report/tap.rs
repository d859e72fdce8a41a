//! TAP output, declared `TAP version 13`: the version Perl's `prove`
//! (TAP::Harness, which refuses any version above 13) and TAP 14
//! consumers (the TAP 14 specification requires them to accept 13
//! streams; node's tap-parser does) both read. Nothing in the stream needs
//! 14: no subtests, no pragmas.

use super::{Report, Status};

/// Render the report as TAP 13 (see the module docs): skips are `# SKIP`,
/// warnings are `ok` with a `# warn:` note, failures are `not ok` with a
/// YAML diagnostic block (level, spec, detail, kind, caused_by, ended_by,
/// audit events); a skip or warning's directive starts with its kind.
pub fn render_tap(report: &Report) -> String {
    let mut out = format!("TAP version 13\n1..{}\n", report.cases.len());
    out.push_str(&format!(
        "# kaged-conformance: {} {} (time scale {})\n",
        report.plugin.name, report.plugin.version, report.time_scale
    ));
    if let Some(line) = report.cage_line() {
        out.push_str(&format!("# {line}\n"));
    }
    if let Some(t) = &report.timeouts {
        out.push_str(&format!("# effective timeouts: {}\n", t.describe()));
    }
    for (i, c) in report.cases.iter().enumerate() {
        let n = i + 1;
        let line = match c.status {
            Status::Pass => format!("ok {n} - {} {}\n", c.id, c.title),
            Status::Warn => format!(
                "ok {n} - {} {} # warn: {}{}\n",
                c.id,
                c.title,
                kind_prefix(c),
                one_line(&c.detail)
            ),
            Status::Skip => format!(
                "ok {n} - {} {} # SKIP {}{}\n",
                c.id,
                c.title,
                kind_prefix(c),
                one_line(&c.detail)
            ),
            Status::Fail => format!("not ok {n} - {} {}\n", c.id, c.title),
        };
        out.push_str(&line);
        if c.status == Status::Fail {
            out.push_str("  ---\n");
            out.push_str(&format!(
                "  level: {}\n  spec: {}\n",
                c.level.as_str(),
                yaml_str(&c.spec)
            ));
            out.push_str(&format!("  detail: {}\n", yaml_str(&c.detail)));
            if let Some(k) = c.kind {
                out.push_str(&format!("  kind: {}\n", k.as_str()));
            }
            if let Some(root) = &c.caused_by {
                out.push_str(&format!("  caused_by: {}\n", yaml_str(root)));
            }
            if let Some(e) = c.ended_by {
                out.push_str(&format!("  ended_by: {}\n", e.as_str()));
            }
            out.push_str(&format!(
                "  audit_events: [{}]\n",
                c.audit_events.join(", ")
            ));
            out.push_str("  ...\n");
        }
    }
    out
}

/// `[kind, caused by X] ` for a skip or warning's directive text.
fn kind_prefix(c: &super::CaseResult) -> String {
    match (c.kind, &c.caused_by) {
        (Some(k), Some(root)) => format!("[{}, caused by {}] ", k.as_str(), one_line(root)),
        (Some(k), None) => format!("[{}] ", k.as_str()),
        (None, _) => String::new(),
    }
}

fn one_line(s: &str) -> String {
    s.replace('\n', " ").replace('#', "\\#")
}

fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}
