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

/// The skips the human report counts instead of listing one by one: what
/// `--only`/`--skip` left out, and each case that could not run because
/// another failed (a skip with `caused_by`; that root is listed, and in
/// detail below). Every other format lists them all.
///
/// ```
/// use kaged_conformance::catalogue::Level;
/// use kaged_conformance::report::{CaseResult, Folded, Status};
/// let case = |id: &str, caused_by: Option<&str>| CaseResult {
///     id: id.into(),
///     title: String::new(),
///     level: Level::Must,
///     spec: String::new(),
///     status: if caused_by.is_some() { Status::Skip } else { Status::Fail },
///     duration_ms: 0,
///     detail: "the manifest is invalid".into(),
///     audit_events: vec![],
///     kind: None,
///     caused_by: caused_by.map(str::to_string),
///     ended_by: None,
///     known_failure: None,
///     sentence: String::new(),
///     transcript_tail: vec![],
/// };
/// let mut folded = Folded::default();
/// assert!(!folded.take(&case("manifest.valid", None)));
/// assert!(folded.take(&case("protocol.ping", Some("manifest.valid"))));
/// assert!(folded.take(&case("launch.starts", Some("manifest.valid"))));
/// assert_eq!(folded.lines(), ["(2 case(s) not run: they follow from manifest.valid)"]);
/// ```
#[derive(Debug, Default)]
pub struct Folded {
    left_out: usize,
    blocked: Vec<(String, usize)>,
}

impl Folded {
    /// Count `c` when it is one to fold (`true`), else leave it to be listed.
    pub fn take(&mut self, c: &CaseResult) -> bool {
        if c.deselected() {
            self.left_out += 1;
            return true;
        }
        let Some(root) = c.caused_by.as_deref().filter(|_| c.status == Status::Skip) else {
            return false;
        };
        match self.blocked.iter_mut().find(|(r, _)| r == root) {
            Some((_, n)) => *n += 1,
            None => self.blocked.push((root.to_string(), 1)),
        }
        true
    }

    /// A line per kind of folded case, roots in the order first met.
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .blocked
            .iter()
            .map(|(root, n)| format!("({n} case(s) not run: they follow from {root})"))
            .collect();
        if self.left_out > 0 {
            out.push(format!(
                "({} case(s) left out by --only/--skip)",
                self.left_out
            ));
        }
        out
    }
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
        let mut folded = Folded::default();
        for c in &report.cases {
            if !folded.take(c) {
                out.push_str(&render_case_line(c, colour));
                out.push('\n');
            }
        }
        for line in folded.lines() {
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
