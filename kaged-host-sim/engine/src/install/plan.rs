//! [`InstallPlan`]: what the operator is asked to consent to (install
//! steps 1-4 done), its prompt, and what the copy will leave out.

use std::collections::BTreeMap;
use std::path::PathBuf;

use sha2::{Digest, Sha256};

use super::error::InstallError;
use super::select::{select, LeftOut};

/// The SHA-256 of `bytes`, lowercase hex.
pub fn manifest_digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Capabilities gained and lost by an upgrade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upgrade {
    /// The installed version.
    pub old_version: String,
    /// Capabilities the new version adds (they widen the sandbox).
    pub added: Vec<String>,
    /// Capabilities the new version no longer asks for.
    pub removed: Vec<String>,
}

/// What the operator is asked to consent to (steps 1-4 done).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallPlan {
    /// The plugin's name.
    pub name: String,
    /// The version offered.
    pub version: String,
    /// Its `kaged_api`.
    pub kaged_api: i64,
    /// Its description.
    pub description: String,
    /// Its capabilities, canonical.
    pub capabilities: Vec<String>,
    /// Where path capabilities land on this host, as the cage resolves
    /// them (`write:fs:config:/memory` → `/home/op/.config/kaged/memory`),
    /// shown beside each in the prompt.
    pub resolved: BTreeMap<String, String>,
    /// The manifest's warnings, one per line, and install's own (a copy
    /// larger than [`LARGE_COPY_BYTES`](super::LARGE_COPY_BYTES)).
    pub warnings: Vec<String>,
    /// The bytes install will copy.
    pub copy_bytes: u64,
    /// The source directory.
    pub source: PathBuf,
    /// Its `command` (install ships the files it names).
    pub command: Vec<String>,
    /// Set when another version is installed; for a re-consent
    /// ([`reconsent`](Self::reconsent)), what the installed copy asks
    /// beyond the recorded consent (`added`) and no longer asks (`removed`).
    pub upgrade: Option<Upgrade>,
    /// Consent asked again for an installed copy (`plugin consent`).
    pub reconsent: bool,
    /// The SHA-256 of the manifest shown (hex): recorded on consent.
    pub manifest_sha256: String,
}

impl InstallPlan {
    /// The prompt text of the spec's install (or upgrade) transcript,
    /// without the question itself.
    pub fn render(&self) -> String {
        let mut out = match &self.upgrade {
            Some(_) if self.reconsent => format!(
                "Plugin {} {} is installed; its manifest (sha256 {}) asks:\n\nCapability changes since consent:\n",
                self.name, self.version, self.manifest_sha256
            ),
            None => format!(
                "  name: {}\n  version: {}\n  kaged_api: {}\n  description: {}\n  capabilities:\n",
                self.name, self.version, self.kaged_api, self.description
            ),
            Some(u) => format!(
                "Plugin {} is already installed (version {}).\nNew version: {}\n\nCapability changes:\n",
                self.name, u.old_version, self.version
            ),
        };
        match &self.upgrade {
            None if self.capabilities.is_empty() => out.push_str("    (none)\n"),
            None => self
                .capabilities
                .iter()
                .for_each(|c| match self.resolved.get(c) {
                    Some(at) => out.push_str(&format!("    - {c}    (→ {at})\n")),
                    None => out.push_str(&format!("    - {c}\n")),
                }),
            Some(u) if u.added.is_empty() && u.removed.is_empty() => out.push_str("  (none)\n"),
            Some(u) => {
                u.added.iter().for_each(|c| match self.resolved.get(c) {
                    Some(at) => out.push_str(&format!("  + {c}    (NEW, → {at})\n")),
                    None => out.push_str(&format!("  + {c}    (NEW)\n")),
                });
                u.removed
                    .iter()
                    .for_each(|c| out.push_str(&format!("  - {c}    (REMOVED)\n")));
            }
        }
        for w in &self.warnings {
            out.push_str(&format!("  warning: {w}\n"));
        }
        out
    }

    /// The question to end the prompt with.
    pub fn question(&self) -> String {
        match &self.upgrade {
            Some(_) if self.reconsent => format!("Consent to what {} asks?", self.name),
            None => format!("Install {}?", self.name),
            Some(u) => format!(
                "Upgrade {} {} → {}?",
                self.name, u.old_version, self.version
            ),
        }
    }

    /// What the copy leaves out of [`source`](Self::source) (`.git/`,
    /// what `.kagedignore` names, what is not a file), each with
    /// why: what to look at when the installed copy does not start.
    pub fn left_out(&self) -> Result<Vec<LeftOut>, InstallError> {
        Ok(select(&self.source, &self.name, &self.command)?.left_out)
    }
}
