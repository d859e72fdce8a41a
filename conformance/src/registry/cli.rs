//! `kaged-conformance matrix` and `kaged-conformance merge`: their
//! options and what they print and exit with.

use std::path::PathBuf;

use kaged_plugin_protocol::error_chain::chain as error_chain;

use super::{matrix, merge, page, Change, Merged, Registry};

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

/// `kaged-conformance matrix`: 0, or 2 with the reason on stderr.
pub fn matrix_cmd(a: &MatrixArgs) -> i32 {
    let registry = match Registry::load(&a.registry) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kaged-conformance: error: {}", error_chain(&e));
            return 2;
        }
    };
    if let Some(file) = &a.workflow {
        let text = matrix::github_workflow(&a.registry.display().to_string());
        let written = file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(file, text));
        if let Err(e) = written {
            eprintln!(
                "kaged-conformance: error: cannot write {}: {e}",
                file.display()
            );
            return 2;
        }
    }
    match a.format {
        MatrixFormat::Github => kaged_host_core::outln!("{}", matrix::github_matrix(&registry)),
        MatrixFormat::Gitlab => kaged_host_core::out!("{}", matrix::gitlab_pipeline(&registry)),
    }
    0
}

/// `kaged-conformance merge`: 0 when every plugin is good, 1 when one is
/// not, 2 when the reports cannot be merged.
pub fn merge_cmd(a: &MergeArgs) -> i32 {
    let previous: Option<Merged> = match &a.previous {
        None => None,
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        {
            Ok(m) => Some(m),
            Err(e) => {
                eprintln!(
                    "kaged-conformance: error: {} is not a merge's index.json: {e}",
                    p.display()
                );
                return 2;
            }
        },
    };
    let (merged, reports) = match merge(&a.reports, previous.as_ref()) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("kaged-conformance: error: {}", error_chain(&e));
            return 2;
        }
    };
    if let Err(e) = page::write(&a.out, &merged, &reports) {
        eprintln!(
            "kaged-conformance: error: cannot write {}: {e}",
            a.out.display()
        );
        return 2;
    }
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
    i32::from(bad > 0)
}
