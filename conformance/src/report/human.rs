//! The human report: a line per case, then failures in detail (each root
//! cause first, the failures that follow from it after it) and a summary.

use super::{CaseResult, Report, Status};

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

fn paint(s: &str, colour: &str, on: bool) -> String {
    if on {
        format!("{colour}{s}{RESET}")
    } else {
        s.to_string()
    }
}

/// The line that counts the `left_out` cases `--only`/`--skip` left out,
/// when there are any (the human report lists the others one by one).
pub fn left_out_line(left_out: usize) -> Option<String> {
    (left_out > 0).then(|| format!("({left_out} case(s) left out by --only/--skip)"))
}

/// One line for a finished case (`PASS handshake.name_matches  name matches the manifest (3 ms)`).
pub fn render_case_line(c: &CaseResult, colour: bool) -> String {
    let tag = match c.status {
        Status::Pass => paint("PASS", GREEN, colour),
        Status::Fail => paint("FAIL", RED, colour),
        Status::Skip => paint("SKIP", DIM, colour),
        Status::Warn => paint("WARN", YELLOW, colour),
    };
    let mut line = format!("{tag} {:<44} {} ({} ms)", c.id, c.title, c.duration_ms);
    if matches!(c.status, Status::Skip | Status::Warn) && !c.detail.is_empty() {
        let why = match (c.kind, &c.caused_by) {
            (_, Some(root)) => format!("[follows from {root}] "),
            (Some(k), None) if k != super::Kind::NotApplicable => format!("[{}] ", k.as_str()),
            _ => String::new(),
        };
        line.push_str(&paint(
            &format!(" — {why}{}", first_line(&c.detail)),
            DIM,
            colour,
        ));
    }
    line
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}

/// The failures in detail, then the summary. Case lines are printed as the
/// cases finish (see [`render_case_line`]); with `include_lines` they are
/// repeated here (for `--output FILE`).
pub fn render_human(report: &Report, colour: bool, include_lines: bool) -> String {
    let mut out = String::new();
    if let Some(c) = &report.certification {
        out.push_str(&paint(
            &c.line(),
            if c.outcome == super::Outcome::Certified {
                GREEN
            } else {
                RED
            },
            colour,
        ));
        out.push('\n');
    }
    if include_lines {
        for c in report.cases.iter().filter(|c| !c.deselected()) {
            out.push_str(&render_case_line(c, colour));
            out.push('\n');
        }
        let left_out = report.cases.iter().filter(|c| c.deselected()).count();
        if let Some(line) = left_out_line(left_out) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    for c in report.failures_root_first() {
        out.push('\n');
        let head = format!(
            "{} {} [{}] {}",
            c.status.as_str().to_uppercase(),
            c.id,
            c.level.as_str(),
            c.title
        );
        out.push_str(&paint(
            &head,
            if c.status == Status::Fail {
                RED
            } else {
                YELLOW
            },
            colour,
        ));
        out.push('\n');
        if let Some(root) = &c.caused_by {
            out.push_str(&format!("  follows from: {root} (fix that first)\n"));
        }
        if let Some(kind) = c.kind {
            let ended = c.ended_by.map(|e| format!(", ended by {}", e.as_str()));
            out.push_str(&format!(
                "  kind:     {}{}\n",
                kind.as_str(),
                ended.unwrap_or_default()
            ));
        }
        for (i, l) in c.detail.lines().enumerate() {
            out.push_str(if i == 0 {
                "  detail:   "
            } else {
                "            "
            });
            out.push_str(l);
            out.push('\n');
        }
        out.push_str(&format!("  spec:     {}\n", c.spec));
        if !c.sentence.is_empty() {
            out.push_str(&format!("  rule:     \"{}\"\n", c.sentence));
        }
        if !c.audit_events.is_empty() {
            out.push_str(&format!("  audit:    {}\n", c.audit_events.join(", ")));
        }
        if !c.transcript_tail.is_empty() {
            out.push_str("  wire (last lines):\n");
            for l in &c.transcript_tail {
                out.push_str(&format!("    {l}\n"));
            }
        }
    }
    let s = report.summary;
    out.push('\n');
    out.push_str(&format!(
        "{} {} {}: {} passed, {} failed, {} warned, {} skipped (time scale {})\n",
        report.plugin.name,
        report.plugin.version,
        report.plugin.dir,
        s.passed,
        s.failed,
        s.warned,
        s.skipped,
        report.time_scale
    ));
    if let Some(t) = &report.timeouts {
        out.push_str(&format!("effective timeouts: {}\n", t.describe()));
    }
    if let Some(line) = report.cage_line() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}
