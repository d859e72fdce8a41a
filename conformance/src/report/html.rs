//! The HTML report: one self-contained file (its CSS and JavaScript
//! inline, no external asset): the run's facts and counts, a table of
//! every case (status, case, level, spec, duration) filterable by status
//! and id, each case expandable to its detail, audit events and the wire
//! lines that end it, host and plugin directions told apart.

use super::escape::{escape_html, Html};
use super::{CaseResult, Report, Status};

const CSS: &str = include_str!("html/report.css");
const JS: &str = include_str!("html/report.js");

/// Render the report as one self-contained HTML page (see the module
/// docs).
pub fn render_html(report: &Report) -> String {
    let s = report.summary;
    let (verdict_class, verdict) = if s.failed > 0 {
        ("fail", format!("{} failed", s.failed))
    } else if s.warned > 0 {
        ("warn", format!("passed, {} warned", s.warned))
    } else {
        ("pass", "passed".to_string())
    };
    let (verdict_class, verdict) = match &report.certification {
        Some(c) if c.outcome == super::Outcome::Certified => {
            ("pass", format!("certified: {verdict}"))
        }
        Some(_) => ("fail", format!("not certified: {verdict}")),
        None => (verdict_class, verdict),
    };
    let name = format!("{} {}", report.plugin.name, report.plugin.version);
    let mut facts = vec![
        ("plugin dir", report.plugin.dir.clone()),
        (
            "cage",
            report.cage_line().map_or_else(
                || "not run".to_string(),
                |l| l.trim_start_matches("cage: ").to_string(),
            ),
        ),
        ("time scale", report.time_scale.to_string()),
        (
            "cases",
            format!(
                "{} passed, {} failed, {} warned, {} skipped",
                s.passed, s.failed, s.warned, s.skipped
            ),
        ),
    ];
    if let Some(t) = &report.timeouts {
        facts.push(("effective timeouts", t.describe()));
    }
    if let Some(c) = &report.certification {
        facts.insert(0, ("certification", c.line()));
    }
    let facts: String = facts
        .iter()
        .map(|(k, v)| format!("<div><dt>{}</dt><dd>{}</dd></div>", esc(k), esc(v)))
        .collect();
    let count = |st: Status| report.cases.iter().filter(|c| c.status == st).count();
    // The page opens on what did not pass, failures first, each root
    // before what follows from it; passes are folded away (`all` shows
    // them).
    let open = report.cases.len() - count(Status::Pass);
    let selected = if count(Status::Fail) + count(Status::Warn) > 0 {
        "open"
    } else {
        "all"
    };
    let options: String = [
        ("open", "not passed", open),
        ("all", "all", report.cases.len()),
        ("fail", "failed", count(Status::Fail)),
        ("warn", "warned", count(Status::Warn)),
        ("skip", "skipped", count(Status::Skip)),
        ("pass", "passed", count(Status::Pass)),
    ]
    .iter()
    .map(|(v, label, n)| {
        let sel = if *v == selected { " selected" } else { "" };
        format!("<option value=\"{v}\"{sel}>{label} ({n})</option>")
    })
    .collect();
    let failures = report.failures_root_first();
    let ordered: Vec<&CaseResult> = failures
        .iter()
        .copied()
        .chain(
            report
                .cases
                .iter()
                .filter(|c| matches!(c.status, Status::Skip | Status::Pass)),
        )
        .collect();
    let rows: String = ordered
        .iter()
        .enumerate()
        .map(|(i, c)| case_rows(i, c))
        .collect();
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>kaged-conformance: {title}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n\
         <header>\n<h1>kaged-conformance <span class=\"plugin\">{title}</span>\
         <span class=\"verdict {verdict_class}\">{verdict}</span></h1>\n\
         <dl class=\"facts\">{facts}</dl>\n</header>\n<main>\n\
         <div class=\"controls\"><label>Show <select id=\"filter\">{options}</select></label>\n\
         <input id=\"search\" type=\"search\" placeholder=\"case id contains…\" aria-label=\"filter by case id\">\n\
         <button id=\"expand-failures\" type=\"button\">expand failures</button>\n\
         <span id=\"shown\" class=\"none\"></span></div>\n\
         <table id=\"cases\">\n<thead><tr><th>status</th><th>case</th><th>level</th><th>spec</th>\
         <th>duration</th></tr></thead>\n<tbody>\n{rows}</tbody>\n</table>\n</main>\n\
         <script>\n{JS}</script>\n</body>\n</html>\n",
        title = esc(&name),
        verdict = esc(&verdict),
    )
}

/// The case's row and its (hidden) detail row.
fn case_rows(i: usize, c: &CaseResult) -> String {
    let st = c.status.as_str();
    let sentence = if c.sentence.is_empty() {
        String::new()
    } else {
        format!("<p class=\"sentence\">{}</p>", esc(&c.sentence))
    };
    let detail = if c.detail.is_empty() {
        "<p class=\"none\">No detail.</p>".to_string()
    } else {
        format!("<pre class=\"detail-text\">{}</pre>", esc(&c.detail))
    };
    let mut facts = Vec::new();
    if let Some(k) = c.kind {
        facts.push(format!("kind <code>{}</code>", k.as_str()));
    }
    if let Some(root) = &c.caused_by {
        facts.push(format!("follows from <code>{}</code>", esc(root)));
    }
    if let Some(e) = c.ended_by {
        facts.push(format!("ended by <code>{}</code>", e.as_str()));
    }
    let facts = if facts.is_empty() {
        String::new()
    } else {
        format!("<p class=\"kind\">{}</p>", facts.join(" · "))
    };
    let audit = if c.audit_events.is_empty() {
        "<p class=\"audit none\">No audit event.</p>".to_string()
    } else {
        let names: Vec<String> = c
            .audit_events
            .iter()
            .map(|e| format!("<code>{}</code>", esc(e)))
            .collect();
        format!("<p class=\"audit\">Audit events: {}</p>", names.join(", "))
    };
    let wire = if c.transcript_tail.is_empty() {
        "<p class=\"none\">No wire lines.</p>".to_string()
    } else {
        let lines: String = c.transcript_tail.iter().map(|l| wire_line(l)).collect();
        format!("<div class=\"wire\" aria-label=\"wire lines\">{lines}</div>")
    };
    format!(
        "<tr class=\"case\" id=\"case-{i}\" data-index=\"{i}\" data-status=\"{st}\" data-id=\"{id}\" \
         tabindex=\"0\" aria-expanded=\"false\" aria-controls=\"detail-{i}\">\
         <td><span class=\"status {st}\">{st}</span></td>\
         <td><code>{id}</code><div class=\"title\">{title}</div></td>\
         <td>{level}</td><td>{spec}</td><td class=\"duration\">{ms} ms</td></tr>\n\
         <tr class=\"detail\" id=\"detail-{i}\" hidden><td colspan=\"5\">{facts}{sentence}{detail}{audit}{wire}</td></tr>\n",
        id = esc(&c.id),
        title = esc(&c.title),
        level = c.level.as_str(),
        spec = esc(&c.spec),
        ms = c.duration_ms,
    )
}

/// One transcript line (`{"seq": n, "dir": "host>plugin", "msg": ..}`,
/// possibly cut), its direction shown and styled.
fn wire_line(line: &str) -> String {
    let dir = ["host>plugin", "plugin>host", "plugin!stderr"]
        .into_iter()
        .find(|d| line.contains(&format!("\"dir\":\"{d}\"")));
    let (class, label) = match dir {
        Some("host>plugin") => ("host", "host → plugin"),
        Some("plugin>host") => ("plugin", "plugin → host"),
        Some(_) => ("stderr", "plugin stderr"),
        None => ("other", ""),
    };
    format!(
        "<div class=\"line {class}\"><span class=\"dir\">{label}</span><code>{}</code></div>",
        esc(line)
    )
}

/// Text made safe for HTML element content and quoted attributes.
fn esc(s: &str) -> String {
    escape_html(s, Html::Attribute)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_cannot_break_out_of_its_element() {
        assert_eq!(
            esc("<script>\"x\" & 'y'"),
            "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;"
        );
    }

    #[test]
    fn directions_are_told_apart() {
        let host = wire_line(r#"{"seq":1,"dir":"host>plugin","msg":{"id":1}}"#);
        let plugin = wire_line(r#"{"seq":2,"dir":"plugin>host","msg":{"id":1}}"#);
        let stderr = wire_line(r#"{"seq":3,"dir":"plugin!stderr","msg":"</div>"}"#);
        assert!(host.starts_with("<div class=\"line host\"><span class=\"dir\">host → plugin"));
        assert!(plugin.starts_with("<div class=\"line plugin\">"));
        assert!(
            stderr.starts_with("<div class=\"line stderr\">") && stderr.contains("&lt;/div&gt;")
        );
    }
}
