//! [`Verdict`]: what a case found, before its level and the baseline are
//! applied.

/// What a case found, before levels and the baseline are applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The rule holds.
    Pass(String),
    /// The rule is broken (a SHOULD case becomes `warn`).
    Fail(String),
    /// The case could not run or does not apply.
    Skip(String),
}

impl Verdict {
    /// The rule holds: `detail` says how.
    pub(crate) fn pass(detail: impl Into<String>) -> Verdict {
        Verdict::Pass(detail.into())
    }

    /// The rule is broken: `detail` says expected and actual.
    pub(crate) fn fail(detail: impl Into<String>) -> Verdict {
        Verdict::Fail(detail.into())
    }

    /// The case did not run: `detail` says why.
    pub(crate) fn skip(detail: impl Into<String>) -> Verdict {
        Verdict::Skip(detail.into())
    }

    /// The case needs a session and there is none: `why`.
    pub(crate) fn no_session(why: impl std::fmt::Display) -> Verdict {
        Verdict::Skip(format!("no session: {why}"))
    }
}
