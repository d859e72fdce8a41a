//! Consent, checked before every start of a store's plugin (ADDENDUM §16):
//! [`ConsentGate`] is the supervisors' [`StartGate`] when `up` serves a
//! plugin store. The installed copy's manifest is compared with the
//! consent recorded at install ([`PluginStore::check_consent`]); a plugin
//! asking more, or with a grant reaching the store, is not spawned:
//! audited `plugin.capability_overreach`, then `plugin.disabled`, shown
//! in the API's plugin row ([`Refusal`]) with the command that re-consents.
//!
//! | what the check finds | `plugin.capability_overreach` data | `plugin.disabled` reason |
//! |---|---|---|
//! | capabilities not covered by the consent | `reason: "not_consented"`, `excess`, `asked`, `consented`, `manifest_sha256`, `consented_sha256`, `reconsent` | `capability_overreach` |
//! | a grant reaching the store | `reason: "covers_store"`, `excess`, `paths`, `store` | `grant_covers_store` |
//! | the consent record cannot be read | — | `consent_unchecked` |

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use kaged_host_core::audit::AuditEvent;
use kaged_host_core::{StartGate, StartRefusal};
use kaged_host_engine::{ConsentCheck, PluginStore};

/// The consent check of the plugins of one store; see the module docs.
#[derive(Debug)]
pub struct ConsentGate {
    store: PluginStore,
    project_root: Option<PathBuf>,
}

impl ConsentGate {
    /// The check of the store at `root`: `config:/` grants resolve under
    /// `config_root`, `project:/` under `project_root`.
    pub fn new(
        root: &Path,
        config_root: Option<PathBuf>,
        project_root: Option<PathBuf>,
    ) -> Result<ConsentGate, kaged_host_engine::InstallError> {
        let store = PluginStore::open(root, kaged_host_core::AuditLog::discard())?
            .with_config_root(config_root);
        Ok(ConsentGate {
            store,
            project_root,
        })
    }
}

impl StartGate for ConsentGate {
    fn check(&self, dir: &Path) -> Result<(), Box<StartRefusal>> {
        let name = dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        match self
            .store
            .check_consent(&name, self.project_root.as_deref())
        {
            Ok(check) if !check.refused() => Ok(()),
            Ok(check) => Err(Box::new(refusal(&check, self.store.root()))),
            Err(e) => Err(Box::new(StartRefusal {
                reason: "consent_unchecked".to_string(),
                capabilities: Vec::new(),
                remedy: None,
                message: kaged_host_core::one_line("the consent record cannot be read", &e),
                event: None,
                data: json!({}),
            })),
        }
    }
}

/// The refusal of a check that refused.
fn refusal(check: &ConsentCheck, store: &Path) -> StartRefusal {
    let message = check.refusal_message().unwrap_or_default();
    if !check.over_store.is_empty() {
        let excess: Vec<String> = check
            .over_store
            .iter()
            .map(|g| g.capability.clone())
            .collect();
        let paths: Vec<_> = check
            .over_store
            .iter()
            .map(|g| json!({"capability": g.capability, "path": g.path, "covers": g.covers}))
            .collect();
        return StartRefusal {
            reason: "grant_covers_store".to_string(),
            capabilities: excess.clone(),
            remedy: None,
            message,
            event: Some(AuditEvent::CapabilityOverreach),
            data: json!({"reason": "covers_store", "excess": excess, "paths": paths,
                         "store": store}),
        };
    }
    StartRefusal {
        reason: "capability_overreach".to_string(),
        capabilities: check.over.clone(),
        remedy: Some(check.reconsent.clone()),
        message,
        event: Some(AuditEvent::CapabilityOverreach),
        data: json!({"reason": "not_consented", "excess": check.over, "asked": check.asked,
                     "consented": check.consented, "manifest_sha256": check.digest,
                     "consented_sha256": check.consented_digest,
                     "reconsent": check.reconsent}),
    }
}

/// Why a plugin was not started, as the API's plugin row shows it
/// (`"refusal"`; `null` when nothing was refused).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// `plugin.disabled`'s reason (`capability_overreach`,
    /// `grant_covers_store`).
    pub reason: String,
    /// The capabilities at fault.
    pub capabilities: Vec<String>,
    /// One line: what was refused and what to do.
    pub message: String,
    /// The command that lets the plugin start (re-consent), when one can.
    pub remedy: Option<String>,
}

impl From<StartRefusal> for Refusal {
    fn from(r: StartRefusal) -> Refusal {
        Refusal {
            reason: r.reason,
            capabilities: r.capabilities,
            message: r.message,
            remedy: r.remedy,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_store_guard_protects_the_file_a_running_daemon_leaves() {
        assert!(kaged_host_engine::STORE_OWNED.contains(&super::super::link::DAEMON_FILE));
    }
}
