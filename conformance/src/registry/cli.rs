//! `kaged-conformance matrix` and `kaged-conformance merge`: their
//! options and what they print and exit with.

use std::path::PathBuf;

use kaged_plugin_protocol::error_chain::chain as error_chain;

use super::{matrix, merge, page, Change, Merged, Registry};
use crate::cli_error::{write_output, CliError};

/// The matrix's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MatrixFormat {
    /// `{"include": [...]}` on one line.
    Github,
    /// A GitLab child pipeline (YAML).
    Gitlab,
}

/// `matrix` options.
#[derive(Debug, clap::Args)]
pub struct MatrixArgs {
    /// The registry file.
    pub registry: PathBuf,
    /// What to print.
    #[arg(long, value_enum, default_value = "github")]
    pub format: MatrixFormat,
    /// Also write a GitHub workflow certifying the registry to FILE.
    #[arg(long, value_name = "FILE")]
    pub workflow: Option<PathBuf>,
}

/// `merge` options.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The JSON reports, one per plugin and version.
    #[arg(required = true)]
    pub reports: Vec<PathBuf>,
    /// Where the page goes (created; its files rewritten).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The `index.json` of the previous merge: what changed since.
    #[arg(long, value_name = "INDEX")]
    pub previous: Option<PathBuf>,
}

/// `kaged-conformance matrix`: 0 (an `Err` is exit status 2).
pub fn matrix_cmd(a: &MatrixArgs) -> Result<i32, CliError> {
    let registry = Registry::load(&a.registry).map_err(|e| CliError::Refused(error_chain(&e)))?;
    if let Some(file) = &a.workflow {
        write_output(
            file,
            &matrix::github_workflow(&a.registry.display().to_string()),
        )?;
    }
    match a.format {
        MatrixFormat::Github => kaged_host_core::outln!("{}", matrix::github_matrix(&registry)),
        MatrixFormat::Gitlab => kaged_host_core::out!("{}", matrix::gitlab_pipeline(&registry)),
    }
    Ok(0)
}

/// `kaged-conformance merge`: 0 when every plugin is good, 1 when one is
/// not (an `Err`, when the reports cannot be merged, is exit status 2).
pub fn merge_cmd(a: &MergeArgs) -> Result<i32, CliError> {
    let previous: Option<Merged> = match &a.previous {
        None => None,
        Some(p) => Some(
            std::fs::read_to_string(p)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
                .map_err(|e| {
                    CliError::Refused(format!("{} is not a merge's index.json: {e}", p.display()))
                })?,
        ),
    };
    let (merged, reports) =
        merge(&a.reports, previous.as_ref()).map_err(|e| CliError::Refused(error_chain(&e)))?;
    page::write(&a.out, &merged, &reports).map_err(|source| CliError::Output {
        path: a.out.clone(),
        source,
    })?;
    let bad = merged.rows.iter().filter(|r| !r.good).count();
    let regressed = merged
        .rows
        .iter()
        .filter(|r| r.change == Change::Regressed)
        .count();
    kaged_host_core::outln!(
        "merged {} report(s): {} good, {bad} not, {regressed} regressed; {}",
        merged.rows.len(),
        merged.rows.len() - bad,
        a.out.join("index.html").display()
    );
    Ok(i32::from(bad > 0))
}
