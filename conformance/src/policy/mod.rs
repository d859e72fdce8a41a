//! A certifier's policy (`kaged-conformance run --policy FILE`): what a
//! pass means for whoever certifies third-party plugins, in a file the
//! plugin's repository does not control. Versioned YAML; an unknown key is
//! refused.
//!
//! ```yaml
//! policy: 1              # the format version (required)
//! name: acme-registry    # shown in the report (default: the file's name)
//! require: must          # must: every MUST case passes;
//!                        # should: every MUST and SHOULD case passes
//! baseline: none         # none: a --known-failing baseline excuses nothing;
//!                        # should: it may excuse SHOULD cases (never a MUST
//!                        # case, never through an entry with `*`)
//! plugin_profile: true   # use the plugin's own kaged-conformance.yaml
//! time_scale: 1          # the run's time scale (--time-scale may not differ)
//! cage: require          # require: an uncaged run is not certified; any
//! ```
//!
//! The run itself goes as without a policy (the baseline still turns a
//! listed failure into a warning for the author's reading); the policy
//! then judges the whole report ([`Policy::certify`]): the report's first
//! line and `certification` member say certified or not and why, and the
//! exit status is 0 only when certified.

mod certify;

pub use certify::RunInputs;

use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::report::PolicyRef;

/// The policy format version this kit reads.
pub const POLICY_VERSION: u32 = 1;

/// The lowest level every case of must pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Require {
    /// Every MUST case passes (SHOULD warnings allowed).
    Must,
    /// Every MUST and every SHOULD case passes.
    Should,
}

/// What a `--known-failing` baseline may excuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BaselineRule {
    /// Nothing.
    None,
    /// SHOULD cases listed by exact id.
    Should,
}

/// Whether an uncaged run may be certified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CageRule {
    /// Only a run caged in bwrap.
    Require,
    /// Caged or not (the report still says which).
    Any,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    policy: u32,
    name: Option<String>,
    require: Option<Require>,
    baseline: Option<BaselineRule>,
    plugin_profile: Option<bool>,
    time_scale: Option<f64>,
    cage: Option<CageRule>,
}

/// A certifier's policy, loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Its name, version and digest, as the report states them.
    pub id: PolicyRef,
    /// The lowest level every case must pass (default `must`).
    pub require: Require,
    /// What a baseline may excuse (default `none`).
    pub baseline: BaselineRule,
    /// Whether the plugin's own conformance profile is used (default
    /// true; false runs as if it had none).
    pub plugin_profile: bool,
    /// The run's time scale, when the policy fixes one.
    pub time_scale: Option<f64>,
    /// Whether an uncaged run may be certified (default `require`).
    pub cage: CageRule,
}

/// Why a policy file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file cannot be read.
    #[error("cannot read the policy {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The YAML is not a policy (an unknown key, a wrong value).
    #[error("invalid policy {path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl Policy {
    /// Read and check the policy at `path`.
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let bytes = std::fs::read(path).map_err(|source| PolicyError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let fallback = path.file_stem().map_or_else(
            || "policy".to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        Policy::parse(&bytes, &path.display().to_string(), &fallback)
    }

    /// Parse policy `bytes` from `source` (for messages); `fallback_name`
    /// names a policy without `name`.
    ///
    /// ```
    /// use kaged_conformance::policy::{Policy, Require};
    /// let p = Policy::parse(b"policy: 1\nrequire: should\n", "p.yaml", "p").unwrap();
    /// assert_eq!(p.require, Require::Should);
    /// assert_eq!(p.id.name, "p");
    /// let e = Policy::parse(b"policy: 1\nbaselines: all\n", "p.yaml", "p").unwrap_err();
    /// assert!(e.to_string().contains("baselines"), "{e}");
    /// ```
    pub fn parse(bytes: &[u8], source: &str, fallback_name: &str) -> Result<Policy, PolicyError> {
        let invalid = |message: String| PolicyError::Invalid {
            path: source.to_string(),
            message,
        };
        let text = std::str::from_utf8(bytes).map_err(|e| invalid(format!("not UTF-8: {e}")))?;
        let file: PolicyFile = serde_saphyr::from_str(text).map_err(|e| invalid(e.to_string()))?;
        if file.policy != POLICY_VERSION {
            return Err(invalid(format!(
                "`policy: {}` is a version this kit does not read (it reads {POLICY_VERSION})",
                file.policy
            )));
        }
        if let Some(s) = file.time_scale {
            if !(s > 0.0 && s <= 1.0) {
                return Err(invalid(format!("`time_scale: {s}` is not in (0, 1]")));
            }
        }
        let sha256 = Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(Policy {
            id: PolicyRef {
                name: file.name.unwrap_or_else(|| fallback_name.to_string()),
                version: file.policy,
                sha256,
            },
            require: file.require.unwrap_or(Require::Must),
            baseline: file.baseline.unwrap_or(BaselineRule::None),
            plugin_profile: file.plugin_profile.unwrap_or(true),
            time_scale: file.time_scale,
            cage: file.cage.unwrap_or(CageRule::Require),
        })
    }
}
