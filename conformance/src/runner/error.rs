//! [`SuiteError`]: why the suite could not run at all (exit status 2).

use std::path::PathBuf;

/// Why the suite could not run at all (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The plugin directory does not exist.
    #[error("no such plugin directory: {}", .0.display())]
    NoSuchDir(PathBuf),
    /// The plugin path is not a directory.
    #[error("not a directory: {}", .0.display())]
    NotADir(PathBuf),
    /// The transcript directory cannot be created.
    #[error("cannot create the transcript directory {}", dir.display())]
    TranscriptDir {
        /// The directory.
        dir: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The storage broker's database cannot be opened.
    #[error("cannot open the storage database {}", path.as_ref().map_or_else(|| "(temporary)".to_string(), |p| p.display().to_string()))]
    StorageDb {
        /// The `--storage-db` path (`None`: the temporary database).
        path: Option<PathBuf>,
        /// The cause.
        #[source]
        source: kaged_host_storage::BrokerError,
    },
    /// `--cage require`, and plugins cannot be caged here.
    #[error("--cage require: plugins cannot be caged here: {0}")]
    CageUnavailable(String),
    /// The run's temporary config root cannot be created.
    #[error("cannot create a temporary config root")]
    ConfigRoot(#[source] std::io::Error),
    /// The stored run (`--transcript-dir`) cannot be written.
    #[error("cannot store the run")]
    Stored(#[source] super::stored::StoredError),
    /// The async runtime could not start.
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
}
