//! The report formats of `run`, `judge` and `fuzz`, and rendering a report
//! in one.

use std::path::PathBuf;

use clap::ValueEnum;

use crate::report::{render_html, render_human, render_junit, render_markdown, render_tap, Report};

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A line per case, then failures in detail and a summary.
    Human,
    /// The ADDENDUM §11 JSON object.
    Json,
    /// JUnit XML.
    Junit,
    /// TAP (declared version 13: `prove` and TAP 14 consumers read it).
    Tap,
    /// Markdown for a CI job summary or a pull-request comment.
    Markdown,
    /// One self-contained HTML page, filterable, each case expandable.
    Html,
}

/// `--report FORMAT=FILE`.
pub fn parse_report(text: &str) -> Result<(Format, PathBuf), String> {
    let (format, file) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: expected FORMAT=FILE (e.g. junit=report.xml)"))?;
    let format = Format::from_str(format, true).map_err(|_| {
        format!("{format:?}: not a format (human, json, junit, tap, markdown, html)")
    })?;
    if file.is_empty() {
        return Err(format!("{text:?}: no FILE after ="));
    }
    Ok((format, PathBuf::from(file)))
}

/// The report in `format`, as written to a file.
pub fn render(format: Format, report: &Report) -> String {
    match format {
        Format::Human => render_human(report, false, true),
        Format::Json => format!("{}\n", report.to_json()),
        Format::Junit => render_junit(report),
        Format::Tap => render_tap(report),
        Format::Markdown => render_markdown(report),
        Format::Html => render_html(report),
    }
}
