//! Whether plugins are caged (ADDENDUM §13): the tools' `--cage
//! auto|require|off` and what one spawn got.
//!
//! | mode | bwrap works | bwrap missing or broken |
//! |---|---|---|
//! | `auto` (default) | caged: `"cage": "bwrap"` | uncaged, a warning, `"cage": "unavailable"` |
//! | `require` | caged | the plugin does not start (tools exit 2) |
//! | `off` | uncaged: `"cage": "off"` | uncaged: `"cage": "off"` |
//!
//! `--no-sandbox` is not a cage mode: it never uncages a plugin.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::policy::CagePolicy;
use super::summary::CageSummary;

/// How a host runs plugins.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CageMode {
    /// Caged when bwrap is installed and works; otherwise uncaged, with a
    /// warning, and reported as `unavailable`.
    #[default]
    Auto,
    /// Caged, or the plugin does not start.
    Require,
    /// Uncaged, said in every report and audit record.
    Off,
}

impl CageMode {
    /// Every mode, as written on the command line.
    pub const ALL: [CageMode; 3] = [CageMode::Auto, CageMode::Require, CageMode::Off];

    /// `auto`, `require` or `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            CageMode::Auto => "auto",
            CageMode::Require => "require",
            CageMode::Off => "off",
        }
    }
}

impl fmt::Display for CageMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `--cage` value that is not `auto`, `require` or `off`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid cage mode {0:?}: expected auto, require or off")]
pub struct CageModeError(pub String);

impl FromStr for CageMode {
    type Err = CageModeError;

    fn from_str(s: &str) -> Result<CageMode, CageModeError> {
        CageMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s.trim())
            .ok_or_else(|| CageModeError(s.to_string()))
    }
}

/// How one plugin process ran, as reports write it (`"cage"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CageKind {
    /// Inside bwrap, with the compiled policy.
    Bwrap,
    /// Uncaged because bwrap is missing or does not work here (`auto`).
    Unavailable,
    /// Uncaged because the tool was told so (`--cage off`).
    Off,
}

impl CageKind {
    /// `bwrap`, `unavailable` or `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            CageKind::Bwrap => "bwrap",
            CageKind::Unavailable => "unavailable",
            CageKind::Off => "off",
        }
    }
}

impl fmt::Display for CageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one spawn got: caged or not, why, and the policy it ran under
/// (or, uncaged under `auto`, the policy the daemon would apply).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CageStatus {
    /// `bwrap`, `unavailable` or `off`.
    pub cage: CageKind,
    /// Unique per caged spawn (`plugin.spawned.cage_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cage_id: Option<String>,
    /// Why the plugin ran uncaged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The policy in brief (not under `off`: nothing was compiled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<CageSummary>,
    /// The whole policy, for diagnosing a failure ([`CagePolicy::access`]).
    #[serde(skip)]
    pub policy: Option<Arc<CagePolicy>>,
}

impl CageStatus {
    /// Caged as `cage_id` under `policy`.
    pub fn caged(cage_id: String, policy: CagePolicy) -> CageStatus {
        CageStatus {
            cage: CageKind::Bwrap,
            cage_id: Some(cage_id),
            reason: None,
            summary: Some(policy.summary()),
            policy: Some(Arc::new(policy)),
        }
    }

    /// Uncaged under `auto` because bwrap cannot cage here; `policy` is
    /// what the daemon would have applied.
    pub fn unavailable(reason: String, policy: CagePolicy) -> CageStatus {
        CageStatus {
            cage: CageKind::Unavailable,
            cage_id: None,
            reason: Some(reason),
            summary: Some(policy.summary()),
            policy: Some(Arc::new(policy)),
        }
    }

    /// Uncaged by `--cage off`.
    pub fn off() -> CageStatus {
        CageStatus {
            cage: CageKind::Off,
            cage_id: None,
            reason: Some("--cage off: plugins run uncaged".to_string()),
            summary: None,
            policy: None,
        }
    }

    /// Whether the process ran inside bwrap.
    pub fn is_caged(&self) -> bool {
        self.cage == CageKind::Bwrap
    }

    /// One line for a tool's output: `cage: bwrap (cage-…): ro …; net none…`,
    /// `cage: unavailable (why), plugins run uncaged`, `cage: off (…)`.
    pub fn line(&self) -> String {
        match self.cage {
            CageKind::Bwrap => format!(
                "cage: bwrap ({}): {}",
                self.cage_id.as_deref().unwrap_or("?"),
                self.summary
                    .as_ref()
                    .map(CageSummary::line)
                    .unwrap_or_default()
            ),
            CageKind::Unavailable => format!(
                "cage: unavailable, the plugin ran UNCAGED ({})",
                self.reason.as_deref().unwrap_or("bwrap cannot cage here")
            ),
            CageKind::Off => "cage: off, the plugin ran UNCAGED (--cage off)".to_string(),
        }
    }
}
