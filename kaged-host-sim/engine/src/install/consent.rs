//! Consent, checked at every start (ADDENDUM §16: "a manifest asking more
//! than was consented at install does not start",
//! `plugin.capability_overreach`).
//!
//! Install (and an upgrade, and [`PluginStore::consent`]) records in the
//! store's local config the capabilities the operator consented to and the
//! SHA-256 of the manifest shown ([`InstalledPlugin::manifest_sha256`]).
//! [`PluginStore::check_consent`] compares the installed copy's manifest
//! with that record; the daemon runs it before every start, `plugin list`
//! shows it.
//!
//! **What "asks more" means** ([`covered_by`]). Each capability of the
//! manifest must be covered by one consented capability: the same
//! canonical string, or a broader one that obviously holds it:
//!
//! | asked | covered by |
//! |---|---|
//! | `net:[]` (asks for nothing) | always |
//! | `net:HOST:PORT` | `net:HOST:*`, `net:*` |
//! | `net:HOST:*` | `net:*` |
//! | `kaged:storage:read` | `kaged:storage:write` (which implies read) |
//! | `read:fs:P` | `read:fs:Q` or `write:fs:Q`, P inside Q (same root, lexically) |
//! | `write:fs:P` | `write:fs:Q`, P inside Q |
//! | `exec:BIN:P` | exactly itself |
//!
//! A manifest asking less, or the same, starts. A manifest whose bytes
//! changed (another digest) but asks nothing new starts too; `plugin list`
//! says `manifest changed since consent`.

use std::path::Path;

use kaged_plugin_protocol::capability::Capability;
use kaged_plugin_protocol::manifest::MANIFEST_FILE;

use super::error::InstallError;
use super::plan::{manifest_digest, InstallPlan, Upgrade};
use super::registry::{InstalledPlugin, Registry};
use super::store_guard::{grants_over_store, StoreGrant};
use super::PluginStore;

/// The command that asks the operator's consent again for `name` in the
/// store at `store_root` (this kit's CLI).
pub fn reconsent_command(name: &str, store_root: &Path) -> String {
    format!(
        "kaged-host-sim plugin consent {name} --store {}",
        store_root.display()
    )
}

/// Whether `asked` is covered by one of `consented` (see the module docs'
/// table). Strings that do not parse are compared as they are.
pub fn covered_by(asked: &str, consented: &[String]) -> bool {
    if consented.iter().any(|c| c == asked) {
        return true;
    }
    let Ok(asked) = Capability::parse(asked) else {
        return false;
    };
    if asked == Capability::NetNone {
        return true;
    }
    consented
        .iter()
        .filter_map(|c| Capability::parse(c).ok())
        .any(|c| holds(&c, &asked))
}

/// Whether the consented `broad` holds `narrow`.
fn holds(broad: &Capability, narrow: &Capability) -> bool {
    use Capability as C;
    match (broad, narrow) {
        (C::NetAll, C::Net { .. }) => true,
        (C::Net { host, port: None }, C::Net { host: h, .. }) => host == h,
        (C::StorageWrite, C::StorageRead) => true,
        (C::ReadFs(_) | C::WriteFs(_), C::ReadFs(_)) | (C::WriteFs(_), C::WriteFs(_)) => {
            matches!((narrow.path_grant(), broad.path_grant()), (Some(p), Some(q)) if p.lies_inside(&q))
        }
        (a, b) => a == b,
    }
}

/// The installed copy of a plugin against the consent recorded for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentCheck {
    /// The plugin.
    pub name: String,
    /// What the installed manifest asks (canonical); empty when it cannot
    /// be read (the launch then refuses the manifest itself).
    pub asked: Vec<String>,
    /// What was consented.
    pub consented: Vec<String>,
    /// What the manifest asks and the consent does not cover, in the
    /// manifest's order.
    pub over: Vec<String>,
    /// Grants that reach the store (never granted, consented or not).
    pub over_store: Vec<StoreGrant>,
    /// The SHA-256 of the installed manifest (`None`: unreadable).
    pub digest: Option<String>,
    /// The SHA-256 recorded at consent (`None` in an older entry).
    pub consented_digest: Option<String>,
    /// The command that asks consent again.
    pub reconsent: String,
}

impl ConsentCheck {
    /// Whether the plugin may not start.
    pub fn refused(&self) -> bool {
        !self.over.is_empty() || !self.over_store.is_empty()
    }

    /// Whether the manifest's bytes differ from those consented to (both
    /// digests known).
    pub fn manifest_changed(&self) -> bool {
        matches!((&self.digest, &self.consented_digest), (Some(a), Some(b)) if a != b)
    }

    /// One line: why the plugin does not start and what to do; `None`
    /// when it may start.
    pub fn refusal_message(&self) -> Option<String> {
        if let Some(g) = self.over_store.first() {
            return Some(format!(
                "`{}` reaches {} (the plugin store): an installed copy is read-only to its \
                 cage, so no grant may reach the store; install a version without it",
                g.capability,
                g.covers.display()
            ));
        }
        (!self.over.is_empty()).then(|| {
            format!(
                "the manifest asks {} beyond the consent given at install; re-consent with: {}",
                self.over.join(", "),
                self.reconsent
            )
        })
    }
}

impl PluginStore {
    /// The installed copy of `name` against its recorded consent (see the
    /// module docs); `config:/` and `project:/` grants resolve under the
    /// store's config root and `project_root`.
    pub fn check_consent(
        &self,
        name: &str,
        project_root: Option<&Path>,
    ) -> Result<ConsentCheck, InstallError> {
        let entry = self.entry(name)?;
        let file = self.plugin_dir(name).join(MANIFEST_FILE);
        let bytes = std::fs::read(&file).ok();
        let asked = bytes
            .as_deref()
            .and_then(|_| kaged_host_core::validate::validate_dir(&self.plugin_dir(name)).manifest)
            .map(|m| m.capability_strings())
            .unwrap_or_default();
        let over = asked
            .iter()
            .filter(|c| !covered_by(c, &entry.capabilities))
            .cloned()
            .collect();
        let over_store = grants_over_store(
            &asked,
            self.root(),
            self.config_root.as_deref(),
            project_root,
        );
        Ok(ConsentCheck {
            reconsent: reconsent_command(name, self.root()),
            name: entry.name,
            asked,
            consented: entry.capabilities,
            over,
            over_store,
            digest: bytes.as_deref().map(manifest_digest),
            consented_digest: entry.manifest_sha256,
        })
    }

    /// Ask the operator's consent again for what the installed copy of
    /// `name` asks now (`plugin consent`): the prompt shows what it asks
    /// beyond the recorded consent; on consent, its capabilities and its
    /// manifest's digest become the record. A grant reaching the store is
    /// refused (no consent lets it start).
    pub fn consent(
        &self,
        name: &str,
        consent: impl FnOnce(&InstallPlan) -> bool,
    ) -> Result<InstalledPlugin, InstallError> {
        let entry = self.entry(name)?;
        let dir = self.plugin_dir(name);
        let mut plan = self.read_plan(&dir)?;
        plan.reconsent = true;
        plan.upgrade = Some(Upgrade {
            old_version: entry.installed.clone(),
            added: plan
                .capabilities
                .iter()
                .filter(|c| !covered_by(c, &entry.capabilities))
                .cloned()
                .collect(),
            removed: entry
                .capabilities
                .iter()
                .filter(|c| !plan.capabilities.contains(c))
                .cloned()
                .collect(),
        });
        if !consent(&plan) {
            return Err(InstallError::Declined {
                name: plan.name,
                version: plan.version,
            });
        }
        let mut registry = Registry::load(self.root())?;
        let Some(stored) = registry.plugins.get_mut(name) else {
            return Err(InstallError::NotInstalled {
                name: name.to_string(),
            });
        };
        stored.capabilities = plan.capabilities;
        stored.manifest_sha256 = Some(plan.manifest_sha256);
        let updated = stored.clone();
        registry.save()?;
        Ok(updated)
    }

    /// The local-config entry of `name`.
    fn entry(&self, name: &str) -> Result<InstalledPlugin, InstallError> {
        Registry::load(self.root())?
            .plugins
            .remove(name)
            .ok_or_else(|| InstallError::NotInstalled {
                name: name.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(list: &[&str]) -> Vec<String> {
        list.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn a_broader_consent_covers_a_narrower_ask() {
        let consented = caps(&[
            "net:*",
            "kaged:storage:write",
            "write:fs:config:/memory",
            "read:fs:/srv/data",
            "net:api.example.com:*",
        ]);
        for asked in [
            "net:h:1",
            "net:h:*",
            "net:[]",
            "kaged:storage:read",
            "read:fs:config:/memory/notes",
            "write:fs:config:/memory/./a",
            "read:fs:/srv/data/x",
        ] {
            assert!(covered_by(asked, &consented), "{asked}");
        }
        let narrow = caps(&[
            "net:api.example.com:*",
            "read:fs:/srv/data",
            "kaged:storage:read",
        ]);
        for asked in [
            "net:*",
            "net:other.example.com:443",
            "write:fs:/srv/data",
            "read:fs:/srv/database",
            "read:fs:config:/srv/data",
            "kaged:storage:write",
            "exec:git:/srv/data",
        ] {
            assert!(!covered_by(asked, &narrow), "{asked}");
        }
        assert!(covered_by("net:api.example.com:443", &narrow));
    }

    #[test]
    fn the_digest_is_sha256_hex() {
        assert_eq!(
            manifest_digest(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
