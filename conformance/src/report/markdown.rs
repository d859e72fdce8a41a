//! The Markdown report: a summary fit for a GitHub job summary
//! (`$GITHUB_STEP_SUMMARY`) or a pull-request comment. Deterministic: no
//! durations, no times, the cases in run order.

use super::escape::{escape_html, Html};
use super::{CaseResult, Report, Status};

/// The longest detail shown in the table (characters); the full detail is
/// in the case's `<details>` block.
const DETAIL_CHARS: usize = 200;

/// Render the report as Markdown: a headline, the run's facts and counts,
/// a table of the failed and warned cases, each root cause first with the
/// cases that follow from it (`↳`) after it (status, case, kind, level,
/// spec, a one-line detail), then per failed or warned case a collapsed
/// `<details>` block with its whole detail, its audit events and the wire
/// lines that end it.
pub fn render_markdown(report: &Report) -> String {
    let s = report.summary;
    let verdict = if s.failed > 0 {
        format!("❌ {} failed", s.failed)
    } else if s.warned > 0 {
        format!("⚠️ passed with {} warning(s)", s.warned)
    } else {
        "✅ passed".to_string()
    };
    let verdict = match &report.certification {
        Some(c) if c.outcome == super::Outcome::Certified => format!("✅ certified ({verdict})"),
        Some(_) => format!("❌ not certified ({verdict})"),
        None => verdict,
    };
    let mut out = format!(
        "## kaged-conformance: {} {}: {verdict}\n\n",
        cell(&report.plugin.name),
        cell(&report.plugin.version)
    );
    if let Some(c) = &report.certification {
        out.push_str(&format!("**{}**\n\n", cell(&c.line())));
    }
    let cage = report
        .cage_line()
        .map_or_else(|| "not run".to_string(), |l| cell(&l));
    out.push_str("| plugin | cage | time scale | passed | failed | warned | skipped |\n");
    out.push_str("|---|---|---|---|---|---|---|\n");
    out.push_str(&format!(
        "| `{}` {} | {cage} | {} | {} | {} | {} | {} |\n",
        cell(&report.plugin.name),
        cell(&report.plugin.version),
        report.time_scale,
        s.passed,
        s.failed,
        s.warned,
        s.skipped
    ));
    if let Some(t) = &report.timeouts {
        out.push_str(&format!("\nEffective timeouts: {}.\n", t.describe()));
    }
    let notable: Vec<&CaseResult> = report.failures_root_first();
    if notable.is_empty() {
        out.push_str(&format!(
            "\nEvery case passed or was skipped ({} cases).\n",
            report.cases.len()
        ));
        return out;
    }
    out.push_str("\n### Failed and warned cases\n\n");
    out.push_str("| status | case | kind | level | spec | detail |\n|---|---|---|---|---|---|\n");
    for c in &notable {
        let (case, detail) = match &c.caused_by {
            Some(root) => (
                format!("↳ `{}`", cell(&c.id)),
                format!("follows from `{}`: {}", cell(root), cell(&short(&c.detail))),
            ),
            None => (format!("`{}`", cell(&c.id)), cell(&short(&c.detail))),
        };
        out.push_str(&format!(
            "| {} | {case} | {} | {} | {} | {detail} |\n",
            badge(c.status),
            c.kind.map_or("", |k| k.as_str()),
            c.level.as_str(),
            cell(&c.spec),
        ));
    }
    for c in &notable {
        out.push_str(&format!(
            "\n<details><summary>{} <code>{}</code>: {}</summary>\n\n",
            badge(c.status),
            html(&c.id),
            html(&c.title)
        ));
        out.push_str(&fenced("text", &c.detail));
        if !c.audit_events.is_empty() {
            out.push_str(&format!(
                "\nAudit events: {}\n",
                c.audit_events
                    .iter()
                    .map(|e| format!("`{e}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !c.transcript_tail.is_empty() {
            out.push_str("\nWire (the case's last lines):\n\n");
            out.push_str(&fenced("jsonl", &c.transcript_tail.join("\n")));
        }
        out.push_str("\n</details>\n");
    }
    out
}

fn badge(s: Status) -> &'static str {
    match s {
        Status::Fail => "❌ fail",
        Status::Warn => "⚠️ warn",
        Status::Skip => "⏭️ skip",
        Status::Pass => "✅ pass",
    }
}

/// Text for one table cell: one line, `|` escaped, HTML neutralised.
fn cell(s: &str) -> String {
    html(&s.split_whitespace().collect::<Vec<_>>().join(" ")).replace('|', "\\|")
}

/// The first [`DETAIL_CHARS`] characters of the first line.
fn short(s: &str) -> String {
    let line = s.lines().next().unwrap_or_default();
    if line.chars().count() > DETAIL_CHARS || s.lines().nth(1).is_some() {
        let cut: String = line.chars().take(DETAIL_CHARS).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

fn html(s: &str) -> String {
    escape_html(s, Html::Text)
}

/// A fenced code block whose fence is longer than any backtick run inside.
fn fenced(lang: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{}\n{fence}\n", text.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_stay_in_their_column() {
        assert_eq!(cell("a | b\nc <x>"), "a \\| b c &lt;x&gt;");
    }

    #[test]
    fn a_fence_outlasts_the_backticks_inside() {
        assert_eq!(fenced("text", "a ``` b"), "````text\na ``` b\n````\n");
        assert_eq!(fenced("text", "plain"), "```text\nplain\n```\n");
    }

    #[test]
    fn long_or_multi_line_details_are_cut() {
        assert_eq!(short("one\ntwo"), "one…");
        assert_eq!(short(&"x".repeat(300)).chars().count(), DETAIL_CHARS + 1);
        assert_eq!(short("fine"), "fine");
    }
}
