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
//! golden: check          # check: the plugin's own golden transcript is
//!                        # checked (the action's `golden`); ignore: not
//! fuzz:                  # the depth `fuzz --policy` runs at (at least):
//!   cases: 200           #   sequences, counted (the same on any machine)
//!   soak: 2000           #   calls of the memory soak
//! ```
//!
//! The run itself goes as without a policy (the baseline still turns a
//! listed failure into a warning for the author's reading); the policy
//! then judges the whole report ([`Policy::certify`]): the report's first
//! line and `certification` member say certified or not and why, and the
//! exit status is 0 only when certified. `kaged-conformance fuzz --policy
//! FILE` fuzzes at the policy's depth, time scale and cage and certifies
//! its report the same way; `kaged-conformance policy FILE` checks a
//! policy and prints it as JSON (what the GitHub Action reads).

mod certify;

pub use certify::RunInputs;

use std::path::Path;

use kaged_host_core::time::TimeScale;
use kaged_plugin_protocol::manifest::from_yaml_str;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::report::PolicyRef;

/// The policy format version this kit reads.
pub const POLICY_VERSION: u32 = 1;

/// The lowest level every case of must pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Require {
    /// Every MUST case passes (SHOULD warnings allowed).
    Must,
    /// Every MUST and every SHOULD case passes.
    Should,
}

/// What a `--known-failing` baseline may excuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BaselineRule {
    /// Nothing.
    None,
    /// SHOULD cases listed by exact id.
    Should,
}

/// Whether the plugin's own golden transcript is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GoldenRule {
    /// Checked, when the run is given one (an input from the plugin's
    /// repository: it proves the plugin still does what its author
    /// recorded, not what the spec asks).
    Check,
    /// Not checked.
    Ignore,
}

/// The depth a certifying fuzz run goes to (at least).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FuzzDepth {
    /// Sequences, counted: the same run on a busy machine as on an idle
    /// one.
    pub cases: u64,
    /// Calls of the memory soak (default 2000, as `fuzz`'s).
    #[serde(default = "default_soak")]
    pub soak: usize,
}

fn default_soak() -> usize {
    2000
}

/// Whether an uncaged run may be certified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
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
    golden: Option<GoldenRule>,
    fuzz: Option<FuzzDepth>,
}

/// A certifier's policy, loaded.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// Whether the plugin's own golden transcript is checked (default
    /// `check`).
    pub golden: GoldenRule,
    /// The depth of a certifying fuzz run, when the policy asks for one.
    pub fuzz: Option<FuzzDepth>,
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
        let file: PolicyFile = from_yaml_str(text).map_err(|e| invalid(e.to_string()))?;
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
        if let Some(f) = file.fuzz {
            if f.cases == 0 {
                return Err(invalid(
                    "`fuzz: {cases: 0}` fuzzes nothing: give at least 1".into(),
                ));
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
            golden: file.golden.unwrap_or(GoldenRule::Check),
            fuzz: file.fuzz,
        })
    }
}

impl Policy {
    /// The run's time scale under this policy, given `--time-scale` as
    /// `given`: the policy's when it sets one (the flag may be left at its
    /// default or say the same), else `given`; a flag that differs is
    /// refused, saying why (`run --policy` and `fuzz --policy` alike).
    ///
    /// ```
    /// use kaged_conformance::policy::Policy;
    /// use kaged_host_core::TimeScale;
    /// let p = Policy::parse(b"policy: 1\ntime_scale: 0.5\n", "p.yaml", "p").unwrap();
    /// assert_eq!(p.time_scale_over(TimeScale::FULL).unwrap().factor(), 0.5);
    /// assert!(p.time_scale_over(TimeScale::new(0.1).unwrap()).unwrap_err().contains("differs"));
    /// ```
    pub fn time_scale_over(&self, given: TimeScale) -> Result<TimeScale, String> {
        match self.time_scale {
            None => Ok(given),
            Some(f) if given == TimeScale::FULL || given.factor() == f => {
                TimeScale::new(f).map_err(|e| e.to_string())
            }
            Some(f) => Err(format!(
                "--time-scale {} differs from the policy's time_scale {f}: drop the flag, the policy sets it",
                given.factor()
            )),
        }
    }

    /// The policy as JSON, every default filled in (`kaged-conformance
    /// policy FILE`): what a CI step reads with `jq`.
    ///
    /// ```
    /// use kaged_conformance::policy::Policy;
    /// let p = Policy::parse(b"policy: 1\nfuzz: {cases: 50}\n", "p.yaml", "p").unwrap();
    /// let json: serde_json::Value = serde_json::from_str(&p.to_json()).unwrap();
    /// assert_eq!(json["golden"], "check");
    /// assert_eq!(json["fuzz"]["soak"], 2000);
    /// assert_eq!(json["id"]["name"], "p");
    /// ```
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}
