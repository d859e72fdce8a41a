//! [`verify`]: does a statement certify this plugin directory?

use std::path::Path;

use serde_json::Value;

use super::tree::{self, AttestError};
use super::{PREDICATE_TYPE, STATEMENT_TYPE};
use crate::policy::Policy;

/// What a statement that checks out says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// `name@version` of the subject.
    pub subject: String,
    /// The tree digest, which the directory matches.
    pub digest: String,
    /// The policy it was certified under (`name`, sha256).
    pub policy: (String, String),
}

/// Why a statement does not certify the directory.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The statement cannot be read or is not one of ours.
    #[error("cannot use the statement {path}: {why}")]
    Statement {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// The directory cannot be digested.
    #[error(transparent)]
    Plugin(#[from] AttestError),
    /// The directory is not the one certified.
    #[error("the directory does not match the statement's subject {subject}: its installed copy digests to {actual}, the statement says {expected}")]
    Mismatch {
        /// The subject.
        subject: String,
        /// The statement's digest.
        expected: String,
        /// The directory's.
        actual: String,
    },
    /// The statement does not say "certified" (under that policy).
    #[error("the statement does not certify {subject}: {why}")]
    NotCertified {
        /// The subject.
        subject: String,
        /// Why not.
        why: String,
    },
}

impl VerifyError {
    /// Exit status 1 for a statement that does not certify the directory,
    /// 2 for one that cannot be used at all.
    pub fn exit_code(&self) -> i32 {
        match self {
            VerifyError::Mismatch { .. } | VerifyError::NotCertified { .. } => 1,
            VerifyError::Statement { .. } | VerifyError::Plugin(_) => 2,
        }
    }
}

/// Check the statement at `path` against the plugin directory `dir`: its
/// subject digest is the directory's installed copy's, its outcome is
/// `certified`, and, with `policy`, under that policy (same digest).
pub fn verify(path: &Path, dir: &Path, policy: Option<&Policy>) -> Result<Verified, VerifyError> {
    let bad = |why: String| VerifyError::Statement {
        path: path.display().to_string(),
        why,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    if v["_type"] != STATEMENT_TYPE {
        return Err(bad(format!("`_type` is not {STATEMENT_TYPE}")));
    }
    if v["predicateType"] != PREDICATE_TYPE {
        return Err(bad(format!("`predicateType` is not {PREDICATE_TYPE}")));
    }
    let subject = &v["subject"][0];
    let (Some(name), Some(expected)) = (
        subject["name"].as_str(),
        subject["digest"]["sha256"].as_str(),
    ) else {
        return Err(bad("no subject with a sha256 digest".into()));
    };
    let (actual, _) = tree::installed_digest(dir)?;
    if actual != expected {
        return Err(VerifyError::Mismatch {
            subject: name.into(),
            expected: expected.into(),
            actual,
        });
    }
    let p = &v["predicate"];
    let not = |why: String| VerifyError::NotCertified {
        subject: name.into(),
        why,
    };
    if p["outcome"] != "certified" {
        let reasons: Vec<&str> = p["reasons"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        return Err(not(format!(
            "its outcome is {} ({})",
            p["outcome"],
            if reasons.is_empty() {
                "no policy was applied: run with --policy".to_string()
            } else {
                reasons.join("; ")
            }
        )));
    }
    let named = (
        p["policy"]["name"].as_str().unwrap_or_default().to_string(),
        p["policy"]["sha256"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    );
    if let Some(policy) = policy {
        if named.1 != policy.id.sha256 {
            return Err(not(format!(
                "it was certified under policy {} (sha256 {}), not {} (sha256 {})",
                named.0, named.1, policy.id.name, policy.id.sha256
            )));
        }
    }
    Ok(Verified {
        subject: name.into(),
        digest: actual,
        policy: named,
    })
}
