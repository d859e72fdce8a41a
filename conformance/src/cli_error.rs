//! Why a command of the CLI could not run (exit status 2).

use std::path::PathBuf;

/// Why a run could not happen (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The suite could not run.
    #[error(transparent)]
    Suite(#[from] crate::runner::SuiteError),
    /// The baseline cannot be read.
    #[error(transparent)]
    Baseline(#[from] crate::selection::BaselineError),
    /// The attestation cannot be written.
    #[error("cannot write the attestation")]
    Attest(#[from] crate::attest::AttestError),
    /// The certifier's policy cannot be used.
    #[error(transparent)]
    Policy(#[from] crate::policy::PolicyError),
    /// The stored run cannot be judged.
    #[error("cannot judge the stored run")]
    Judge(#[from] crate::runner::stored::StoredError),
    /// The fuzzer could not run.
    #[error(transparent)]
    Fuzz(#[from] crate::fuzz::FuzzError),
    /// A file of the fuzzer's could not be written, or its runtime started.
    #[error("{what}")]
    Io {
        /// What could not be done.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// What the user asked cannot be done (said why).
    #[error("{0}")]
    Refused(String),
    /// A file the user asked for (a report, an attestation, a baseline, a
    /// workflow) cannot be written.
    #[error("cannot write {}", path.display())]
    Output {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// Write a file the user asked for (a report, an attestation, a
/// baseline, a workflow), its directory created when missing.
pub(crate) fn write_output(path: &std::path::Path, text: &str) -> Result<(), CliError> {
    let fail = |source| CliError::Output {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    std::fs::write(path, text).map_err(fail)
}
