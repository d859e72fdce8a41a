//! [`Verdict`]: what a case found, before its level and the baseline are
//! applied, with its [`Kind`] when the case knows it (else the recorder
//! takes the case's own kind, `CaseDef::kind`) and the case it follows
//! from when it knows that.

use crate::catalogue::CaseDef;
use crate::catalogue::Kind;

/// A failed or skipped case's finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// Expected vs actual, or why skipped.
    pub detail: String,
    /// The kind, when the case knows it better than its default.
    pub kind: Option<Kind>,
    /// The id of the case whose failure this one follows from.
    pub caused_by: Option<String>,
}

/// What a case found, before levels and the baseline are applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The rule holds.
    Pass(String),
    /// The rule is broken (a SHOULD case becomes `warn`).
    Fail(Finding),
    /// The case could not run or does not apply.
    Skip(Finding),
}

impl Verdict {
    /// The rule holds: `detail` says how.
    pub(crate) fn pass(detail: impl Into<String>) -> Verdict {
        Verdict::Pass(detail.into())
    }

    /// The rule is broken: `detail` says expected and actual (the kind is
    /// the case's own, or what the recorder finds on the wire).
    pub(crate) fn fail(detail: impl Into<String>) -> Verdict {
        Verdict::Fail(Finding {
            detail: detail.into(),
            kind: None,
            caused_by: None,
        })
    }

    /// The rule is broken, and the case knows how: `kind`.
    pub(crate) fn fail_as(kind: Kind, detail: impl Into<String>) -> Verdict {
        Verdict::Fail(Finding {
            detail: detail.into(),
            kind: Some(kind),
            caused_by: None,
        })
    }

    /// The case does not apply to this plugin: `detail` says why.
    pub(crate) fn skip(detail: impl Into<String>) -> Verdict {
        Verdict::skip_as(Kind::NotApplicable, detail)
    }

    /// The case did not run, for a reason of `kind`.
    pub(crate) fn skip_as(kind: Kind, detail: impl Into<String>) -> Verdict {
        Verdict::Skip(Finding {
            detail: detail.into(),
            kind: Some(kind),
            caused_by: None,
        })
    }

    /// The case could not run because `cause` failed (or could not run):
    /// `detail` says how.
    pub(crate) fn blocked_by(cause: &CaseDef, detail: impl Into<String>) -> Verdict {
        Verdict::Skip(Finding {
            detail: detail.into(),
            kind: Some(Kind::Blocked),
            caused_by: Some(cause.id.to_string()),
        })
    }

    /// The case could not run for a failure the recorder links to its
    /// root (`runner::judge::roots`): `detail` says how.
    pub(crate) fn blocked(detail: impl Into<String>) -> Verdict {
        Verdict::skip_as(Kind::Blocked, detail)
    }

    /// The case needs a session and there is none: `why`.
    /// The verdict with `note` appended to its detail, on a line of its own.
    pub(crate) fn with_note(mut self, note: &str) -> Verdict {
        let detail = match &mut self {
            Verdict::Pass(d) => d,
            Verdict::Fail(f) | Verdict::Skip(f) => &mut f.detail,
        };
        if !detail.is_empty() {
            detail.push('\n');
        }
        detail.push_str(note);
        self
    }

    pub(crate) fn no_session(why: impl std::fmt::Display) -> Verdict {
        Verdict::blocked(format!("no session: {why}"))
    }
}
