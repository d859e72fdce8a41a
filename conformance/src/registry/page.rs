//! The merged registry written out: `index.html` (one self-contained page,
//! no external asset; its one script only collects script errors, as
//! every page of the kit does, for the browser tests), `index.md` (for a job summary),
//! `index.json` (the next merge's `--previous`, and anything else),
//! `badges/NAME.json` (shields.io's endpoint format) and each report under
//! `reports/`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use super::merge::{version_order, Change, Merged, Row};
use crate::report::{escape_html, Html};

fn cell_text(row: &Row, group: &str) -> (String, &'static str) {
    match row.groups.get(group) {
        None => ("—".into(), "none"),
        Some(c) if c.failed > 0 => (format!("✗ {} ({})", c.failed, c.kinds.join(", ")), "fail"),
        Some(c) if c.warned > 0 => (format!("! {} of {}", c.warned, c.passed + c.warned), "warn"),
        Some(c) if c.passed > 0 => (format!("✓ {}", c.passed), "pass"),
        Some(c) => (format!("skip {}", c.skipped), "skip"),
    }
}

/// The change's name (the page's `data-change`).
fn change_text(c: Change) -> &'static str {
    match c {
        Change::Regressed => "regressed",
        Change::New => "new",
        Change::Fixed => "fixed",
        Change::Updated => "updated",
        Change::Same => "",
    }
}

/// The change as shown: with the version it is relative to, when that is
/// another (`regressed since 0.1.0`, `updated from 0.1.0`).
fn change_shown(r: &Row) -> String {
    let name = change_text(r.change);
    match r.previous.as_deref() {
        Some(v) if v != r.version && r.change == Change::Updated => format!("{name} from {v}"),
        Some(v) if v != r.version => format!("{name} since {v}"),
        _ => name.to_string(),
    }
}

/// The page.
pub fn html(m: &Merged) -> String {
    let e = |s: &str| escape_html(s, Html::Text);
    let a = |s: &str| escape_html(s, Html::Attribute);
    let good = m.rows.iter().filter(|r| r.good).count();
    let regressed = m
        .rows
        .iter()
        .filter(|r| r.change == Change::Regressed)
        .count();
    let mut out = String::from(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>kaged plugin registry</title>\n<style>\n\
         body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#1b1f24}\n\
         table{border-collapse:collapse}th,td{border:1px solid #d0d7de;padding:.3rem .5rem;vertical-align:top}\n\
         th{background:#f6f8fa;text-align:left}td.pass{background:#dafbe1}td.fail{background:#ffebe9}\n\
         td.warn{background:#fff8c5}td.skip,td.none{color:#57606a}tr.regressed td.plugin{border-left:4px solid #cf222e}\n\
         .badge{font-weight:600}.good{color:#1a7f37}.bad{color:#cf222e}details{margin:.2rem 0}\n\
         </style>\n<script>window.kagedErrors = [];\n\
         addEventListener(\"error\", (e) => window.kagedErrors.push(String(e.message)));</script>\n\
         </head>\n<body>\n<h1>kaged plugin registry</h1>\n",
    );
    out.push_str(&format!(
        "<p id=\"totals\">{} plugin version(s): {good} certified or passing, {} not; {regressed} regressed since the previous merge.</p>\n",
        m.rows.len(),
        m.rows.len() - good
    ));
    out.push_str("<table id=\"registry\">\n<thead><tr><th>plugin</th><th>version</th><th>outcome</th><th>change</th><th>sandbox</th>");
    for g in &m.groups {
        out.push_str(&format!("<th>{}</th>", e(g)));
    }
    out.push_str("<th>report</th></tr></thead>\n<tbody>\n");
    for r in &m.rows {
        let class = if r.good { "good" } else { "bad" };
        let policy = r
            .policy
            .as_deref()
            .map(|p| format!(" under {}", e(p)))
            .unwrap_or_default();
        out.push_str(&format!(
            "<tr class=\"{}\" data-key=\"{}\" data-outcome=\"{}\" data-change=\"{}\"><td class=\"plugin\">{}</td><td>{}</td><td><span class=\"badge {class}\">{}</span>{policy}",
            change_text(r.change),
            a(&r.key),
            a(&r.outcome),
            a(change_text(r.change)),
            e(&r.name),
            e(&r.version),
            e(&r.outcome.replace('_', " ")),
        ));
        if !r.failures.is_empty() {
            out.push_str(&format!(
                "<details><summary>{} failure(s)</summary><ul>",
                r.failures.len()
            ));
            for f in &r.failures {
                out.push_str(&format!("<li>{}</li>", e(f)));
            }
            out.push_str("</ul></details>");
        }
        out.push_str(&format!(
            "</td><td>{}</td><td>{}</td>",
            e(&change_shown(r)),
            e(&r.cage)
        ));
        for g in &m.groups {
            let (text, class) = cell_text(r, g);
            out.push_str(&format!(
                "<td class=\"{class}\" data-group=\"{}\">{}</td>",
                a(g),
                e(&text)
            ));
        }
        out.push_str(&format!(
            "<td><a href=\"{}\">JSON</a></td></tr>\n",
            a(&r.report)
        ));
    }
    out.push_str("</tbody>\n</table>\n</body>\n</html>\n");
    out
}

/// The page as Markdown (a job summary).
pub fn markdown(m: &Merged) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = format!(
        "## kaged plugin registry\n\n{} plugin version(s), {} certified or passing, {} regressed.\n\n| plugin | version | outcome | change | sandbox |",
        m.rows.len(),
        m.rows.iter().filter(|r| r.good).count(),
        m.rows.iter().filter(|r| r.change == Change::Regressed).count()
    );
    for g in &m.groups {
        out.push_str(&format!(" {} |", cell(g)));
    }
    out.push_str("\n|---|---|---|---|---|");
    out.push_str(&"---|".repeat(m.groups.len()));
    out.push('\n');
    for r in &m.rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |",
            cell(&r.name),
            cell(&r.version),
            cell(&r.outcome.replace('_', " ")),
            cell(&change_shown(r)),
            cell(&r.cage)
        ));
        for g in &m.groups {
            out.push_str(&format!(" {} |", cell(&cell_text(r, g).0)));
        }
        out.push('\n');
    }
    out
}

/// A plugin's badge (shields.io's endpoint format) from its newest row.
pub fn badge(row: &Row) -> serde_json::Value {
    json!({
        "schemaVersion": 1,
        "label": format!("kaged {}", row.name),
        "message": format!("{} {}", row.version, row.outcome.replace('_', " ")),
        "color": if row.good { "brightgreen" } else { "red" },
    })
}

/// Write the page, the index, the badges and the reports into `out`.
pub fn write(out: &Path, m: &Merged, reports: &BTreeMap<String, String>) -> std::io::Result<()> {
    std::fs::create_dir_all(out.join("reports"))?;
    std::fs::create_dir_all(out.join("badges"))?;
    std::fs::write(out.join("index.html"), html(m))?;
    std::fs::write(out.join("index.md"), markdown(m))?;
    let index = serde_json::to_string_pretty(m).map_err(std::io::Error::other)?;
    std::fs::write(out.join("index.json"), index + "\n")?;
    for (key, text) in reports {
        std::fs::write(out.join("reports").join(format!("{key}.json")), text)?;
    }
    // Each plugin's badge says its newest version's outcome.
    let mut newest: BTreeMap<&str, &Row> = BTreeMap::new();
    for r in &m.rows {
        let newer = newest
            .get(r.name.as_str())
            .is_none_or(|n| version_order(&r.version) > version_order(&n.version));
        if newer {
            newest.insert(&r.name, r);
        }
    }
    for (name, row) in newest {
        let text = serde_json::to_string(&badge(row)).map_err(std::io::Error::other)?;
        std::fs::write(out.join("badges").join(format!("{name}.json")), text + "\n")?;
    }
    Ok(())
}
