//! `kaged-conformance list`: the catalogue as text, JSON or markdown. The
//! markdown form is `docs/conformance.md`'s catalogue section (a test keeps
//! the file current).

use crate::catalogue::{CaseDef, CATALOGUE};
use crate::catalogue::{KindFor, KINDS};

/// Marker lines around the generated list of failure kinds in
/// `docs/conformance.md`.
pub const KINDS_BEGIN_MARKER: &str =
    "<!-- BEGIN GENERATED KINDS: kaged_conformance::catalogue::KINDS -->";
/// See [`KINDS_BEGIN_MARKER`].
pub const KINDS_END_MARKER: &str = "<!-- END GENERATED KINDS -->";

/// Every failure kind ([`KINDS`]) as a markdown table, between its
/// generation markers.
pub fn render_kinds_markdown() -> String {
    let mut out = format!("{KINDS_BEGIN_MARKER}\n\n| kind | for | meaning |\n|---|---|---|\n");
    for k in KINDS {
        let status = match k.for_status {
            KindFor::Failure => "fail, warn",
            KindFor::Skip => "skip",
        };
        out.push_str(&format!("| `{}` | {status} | {} |\n", k.name, k.meaning));
    }
    out.push_str(&format!("\n{KINDS_END_MARKER}\n"));
    out
}

/// Marker lines around the generated catalogue in `docs/conformance.md`.
pub const BEGIN_MARKER: &str =
    "<!-- BEGIN GENERATED CATALOGUE: kaged-conformance list --format markdown -->";
/// See [`BEGIN_MARKER`].
pub const END_MARKER: &str = "<!-- END GENERATED CATALOGUE -->";

fn display_id(c: &CaseDef) -> String {
    match c.per.placeholder() {
        Some(per) => format!("{}[<{per}>]", c.id),
        None => c.id.to_string(),
    }
}

/// One line per case: id, level, spec section, title.
pub fn render_text() -> String {
    CATALOGUE
        .iter()
        .map(|c| {
            format!(
                "{:<44} {:<6} {:<60} {}\n",
                display_id(c),
                c.level.as_str(),
                c.spec,
                c.title
            )
        })
        .collect()
}

/// The catalogue as a JSON array.
pub fn render_json() -> String {
    serde_json::to_string_pretty(CATALOGUE).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// The catalogue as a markdown table, between the generation markers.
pub fn render_markdown() -> String {
    let mut out =
        format!("{BEGIN_MARKER}\n\n| id | level | spec | checks | rule |\n|---|---|---|---|---|\n");
    for c in CATALOGUE {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            display_id(c),
            c.level.as_str(),
            c.spec,
            c.title.replace('|', "\\|"),
            c.sentence.replace('|', "\\|")
        ));
    }
    out.push_str(&format!("\n{END_MARKER}\n"));
    out
}
