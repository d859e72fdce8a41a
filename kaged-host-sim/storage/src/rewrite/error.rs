//! Why a statement was not rewritten: a policy denial or invalid SQL.

/// Why a statement was not rewritten.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RewriteError {
    /// The statement is refused by the storage policy (answered `-32003`).
    #[error("storage access denied: {0}")]
    Denied(String),
    /// The SQL does not parse, or cannot be rewritten safely (answered `-32602`).
    #[error("invalid SQL: {0}")]
    Invalid(String),
}

impl RewriteError {
    /// A policy refusal.
    pub fn denied(reason: impl Into<String>) -> RewriteError {
        RewriteError::Denied(reason.into())
    }

    /// Whether this is a policy refusal (as opposed to malformed SQL).
    pub fn is_denial(&self) -> bool {
        matches!(self, RewriteError::Denied(_))
    }
}
