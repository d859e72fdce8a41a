//! A failure of a command, with its exit status.

/// A failure of a command, with its exit status.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad usage: exit 2.
    #[error("{0}")]
    Usage(String),
    /// The plugin or a check failed: exit 1.
    #[error("{0}")]
    Failed(String),
}
