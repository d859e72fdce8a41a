//! The install flow (plugin-host.md § Install flow): validate a plugin
//! directory (refusing one whose `command[0]` leaves it: ADDENDUM §14),
//! show the operator what it asks for, copy it into the plugin store on
//! consent (the directory less `.git/` and what its `.kagedignore` names,
//! or the packed layout of a Rust package: see `select`), upgrade with a
//! capability diff, and uninstall, which
//! refuses while sessions use the plugin unless forced and drops the
//! plugin's storage objects.
//!
//! **Consent** ([`consent`]): install records the capabilities consented
//! to and the manifest's SHA-256; [`PluginStore::check_consent`] compares
//! an installed copy with that record before every start, and
//! [`PluginStore::consent`] asks again. No grant may reach the store
//! ([`store_guard`]): install refuses it.
//!
//! **What uninstall stops.** The simulator has no daemon keeping a registry
//! of sessions, so [`PluginStore::uninstall`] is told two things: how many
//! sessions use the plugin (`active_sessions`, the caller's count: it only
//! decides whether `force` is needed), and the running plugin processes the
//! caller holds (`running`). Of those, the plugin's own are shut down
//! ([`PluginHandle::shutdown`], the graceful ladder) before its storage is
//! dropped and its files removed: the spec's "✓ Stopped oh-my-pi".
//! The store is a directory: `plugins/<name>/` holds each installed copy
//! and `config.toml` the local-config entries ([`InstalledPlugin`]).
//! Audits `plugin.installed`, `plugin.upgraded` and `plugin.uninstalled`.
//!
//! ```
//! use kaged_host_core::AuditLog;
//! use kaged_host_engine::PluginStore;
//! let src = tempfile::tempdir().unwrap();
//! std::fs::write(src.path().join("kaged-plugin.yaml"),
//!     "name: demo\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [./run]\ncapabilities: ['net:[]']\n").unwrap();
//! let store_dir = tempfile::tempdir().unwrap();
//! let audit = AuditLog::memory();
//! let store = PluginStore::open(store_dir.path(), audit.clone()).unwrap();
//! let installed = store.install(src.path(), |plan| {
//!     assert!(plan.render().contains("net:[]"));
//!     true // the operator said yes
//! }).unwrap();
//! assert_eq!((installed.installed.as_str(), installed.enabled), ("1.0.0", false));
//! assert_eq!(audit.names(), ["plugin.installed"]);
//! ```

mod consent;
mod copy;
mod error;
mod kagedignore;
mod packed;
mod plan;
mod registry;
mod restart;
mod select;
mod source;
mod store_guard;
pub use error::InstallError;

use std::path::{Path, PathBuf};

use kaged_plugin_protocol::manifest::MANIFEST_FILE;
use serde_json::json;

pub use consent::{covered_by, reconsent_command, ConsentCheck};
pub use copy::{CopyMode, InstalledSize, LARGE_COPY_BYTES};
pub use kagedignore::KAGEDIGNORE_FILE;
pub use packed::{cargo_target_dir, package_packed_dir, packed_dir};
pub use plan::{manifest_digest, InstallPlan, Upgrade};
use registry::Registry;
pub use registry::{installed_copy, InstalledPlugin};
pub use restart::UpgradeRestart;
use select::packed_layout;
pub use select::{LeftOut, LeftOutReason};
pub use source::{Fetched, PackageSource};
pub use store_guard::{grants_over_store, scratch_store_dir, StoreGrant, STORE_OWNED};

use kaged_host_core::audit::{AuditEvent, AuditLog};
use kaged_host_core::validate::{command_leaves_plugin_dir, validate_dir};
use kaged_host_core::{PluginHandle, ShutdownOutcome};
use kaged_host_storage::StorageBroker;

/// What an uninstall stopped and removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uninstalled {
    /// The local-config entry that was removed.
    pub plugin: InstalledPlugin,
    /// How each running process of the plugin that was handed in ended,
    /// in the order given (empty when none was).
    pub stopped: Vec<ShutdownOutcome>,
    /// The storage objects dropped (prefixed names).
    pub dropped: Vec<String>,
}

/// A plugin store directory with its local-config entries.
#[derive(Debug, Clone)]
pub struct PluginStore {
    root: PathBuf,
    audit: AuditLog,
    config_root: Option<PathBuf>,
    copy_mode: CopyMode,
}

impl PluginStore {
    /// The store at `root` (created when missing), auditing to `audit`.
    pub fn open(root: &Path, audit: AuditLog) -> Result<PluginStore, InstallError> {
        let plugins = root.join("plugins");
        std::fs::create_dir_all(&plugins).map_err(InstallError::io_at(&plugins))?;
        Ok(PluginStore {
            root: root.to_path_buf(),
            audit,
            config_root: None,
            copy_mode: CopyMode::Bytes,
        })
    }

    /// How install writes the copy's files (default [`CopyMode::Bytes`]).
    pub fn with_copy_mode(mut self, mode: CopyMode) -> PluginStore {
        self.copy_mode = mode;
        self
    }

    /// The operator's config root, under which the consent prompt shows
    /// where `config:/` grants land.
    pub fn with_config_root(mut self, config_root: Option<PathBuf>) -> PluginStore {
        self.config_root = config_root;
        self
    }

    /// Where the installed copy of `name` lives.
    pub fn plugin_dir(&self, name: &str) -> PathBuf {
        self.root.join("plugins").join(name)
    }

    /// The installed plugins, by name.
    pub fn list(&self) -> Result<Vec<InstalledPlugin>, InstallError> {
        Ok(Registry::load(&self.root)?.plugins.into_values().collect())
    }

    /// Steps 1-4: the manifest exists and validates, the name is free (or
    /// another version is installed: an upgrade), and what to show. A grant
    /// that reaches the store is refused ([`store_guard`]).
    pub fn plan(&self, src: &Path) -> Result<InstallPlan, InstallError> {
        let mut plan = self.read_plan(src)?;
        plan.upgrade = match Registry::load(&self.root)?.plugins.get(&plan.name) {
            None => None,
            Some(old) if old.installed == plan.version => {
                return Err(InstallError::AlreadyInstalled {
                    name: plan.name,
                    version: old.installed.clone(),
                })
            }
            Some(old) => Some(Upgrade {
                old_version: old.installed.clone(),
                added: plan
                    .capabilities
                    .iter()
                    .filter(|c| !old.capabilities.contains(c))
                    .cloned()
                    .collect(),
                removed: old
                    .capabilities
                    .iter()
                    .filter(|c| !plan.capabilities.contains(c))
                    .cloned()
                    .collect(),
            }),
        };
        Ok(plan)
    }

    /// The plan of the plugin in `src` on its own (no upgrade computed):
    /// validated, self-contained, its grants clear of the store.
    fn read_plan(&self, src: &Path) -> Result<InstallPlan, InstallError> {
        let file = src.join(MANIFEST_FILE);
        if !file.is_file() {
            return Err(InstallError::NoManifest {
                dir: src.to_path_buf(),
            });
        }
        let bytes = std::fs::read(&file).map_err(InstallError::io_at(&file))?;
        let report = validate_dir(src);
        let manifest = match (&report.manifest, report.has_errors()) {
            (Some(m), false) => m.clone(),
            _ => {
                return Err(InstallError::InvalidManifest {
                    dir: src.to_path_buf(),
                    report: report
                        .errors()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("\n"),
                })
            }
        };
        if let Some(command) = manifest
            .command
            .first()
            .filter(|c| command_leaves_plugin_dir(c))
        {
            return Err(InstallError::NotSelfContained {
                name: manifest.name,
                dir: src.to_path_buf(),
                command: command.clone(),
            });
        }
        if let Some(packed) = packed_layout(src, &manifest.name) {
            return self.read_plan(&packed);
        }
        let selection = select::select(src, &manifest.name, &manifest.command)?;
        let mut warnings: Vec<String> = report.warnings().map(ToString::to_string).collect();
        warnings.extend(copy::large_copy_warning(&selection));
        let capabilities = manifest.capability_strings();
        self.refuse_store_grants(&manifest.name, &capabilities)?;
        let resolved = capabilities
            .iter()
            .filter_map(|c| {
                kaged_host_core::cage::consent_target(c, self.config_root.as_deref())
                    .map(|t| (c.clone(), t))
            })
            .collect();
        Ok(InstallPlan {
            resolved,
            name: manifest.name,
            version: manifest.version,
            kaged_api: manifest.kaged_api,
            description: manifest.description,
            capabilities,
            warnings,
            copy_bytes: selection.bytes,
            source: src.to_path_buf(),
            command: manifest.command,
            upgrade: None,
            reconsent: false,
            manifest_sha256: plan::manifest_digest(&bytes),
        })
    }

    /// Refuse `capabilities` of `name` when one reaches the store
    /// ([`store_guard`]).
    fn refuse_store_grants(&self, name: &str, capabilities: &[String]) -> Result<(), InstallError> {
        let over = grants_over_store(capabilities, &self.root, self.config_root.as_deref(), None);
        match over.into_iter().next() {
            None => Ok(()),
            Some(g) => Err(InstallError::GrantCoversStore {
                name: name.to_string(),
                grant: Box::new(g),
                store: self.root.clone(),
            }),
        }
    }

    /// The whole flow of a manual install: [`plan`](Self::plan), ask
    /// `consent`, copy into the store, write the local-config entry
    /// (`local = true`). A new plugin is disabled until enabled; an upgrade
    /// keeps the enabled state.
    pub fn install(
        &self,
        src: &Path,
        consent: impl FnOnce(&InstallPlan) -> bool,
    ) -> Result<InstalledPlugin, InstallError> {
        self.install_scoped(src, None, consent)
    }

    /// A project-load-driven install (plugin-host.md § Project-load-driven
    /// install, step 6): as [`install`](Self::install), recorded
    /// `local = false` for the project `project_id` (added to the projects
    /// it activates for, [`InstalledPlugin::activates_for`]), and enabled:
    /// the operator's approval is the project's request to run it. An entry
    /// already `local = true` stays local. A version that does not meet
    /// the project's `required` version is refused before consent is
    /// asked or anything is copied ([`InstallError::VersionUnmet`]).
    pub fn install_for_project(
        &self,
        src: &Path,
        project_id: &str,
        required: Option<&str>,
        consent: impl FnOnce(&InstallPlan) -> bool,
    ) -> Result<InstalledPlugin, InstallError> {
        self.install_scoped(src, Some((project_id, required)), consent)
    }

    fn install_scoped(
        &self,
        src: &Path,
        project: Option<(&str, Option<&str>)>,
        consent: impl FnOnce(&InstallPlan) -> bool,
    ) -> Result<InstalledPlugin, InstallError> {
        let plan = self.plan(src)?;
        if let Some(required) = project.and_then(|(_, r)| r) {
            if !crate::agents::resolve::version_meets(&plan.version, required) {
                return Err(InstallError::VersionUnmet {
                    name: plan.name,
                    version: plan.version,
                    required: required.to_string(),
                });
            }
        }
        let project = project.map(|(id, _)| id);
        if !consent(&plan) {
            return Err(InstallError::Declined {
                name: plan.name,
                version: plan.version,
            });
        }
        let dest = self.plugin_dir(&plan.name);
        let staging = self
            .root
            .join("plugins")
            .join(format!(".{}.new", plan.name));
        let io = InstallError::io_at;
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
        }
        let src = plan.source.as_path();
        select::select(src, &plan.name, &plan.command)?.copy(src, &staging, self.copy_mode)?;
        if dest.exists() {
            std::fs::remove_dir_all(&dest).map_err(io(&dest))?;
        }
        std::fs::rename(&staging, &dest).map_err(io(&dest))?;
        let mut registry = Registry::load(&self.root)?;
        let old = registry.plugins.get(&plan.name);
        let local = project.is_none() || old.is_some_and(|p| p.local);
        let mut projects = old.map(|p| p.projects.clone()).unwrap_or_default();
        if let Some(id) = project.filter(|id| !projects.iter().any(|p| p == id)) {
            projects.push(id.to_string());
        }
        let entry = InstalledPlugin {
            name: plan.name.clone(),
            installed: plan.version.clone(),
            local,
            projects,
            source: src.display().to_string(),
            enabled: project.is_some() || old.is_some_and(|p| p.enabled),
            capabilities: plan.capabilities.clone(),
            manifest_sha256: Some(plan.manifest_sha256.clone()),
        };
        registry.plugins.insert(plan.name.clone(), entry.clone());
        registry.save()?;
        match &plan.upgrade {
            None => self.audit.emit(
                AuditEvent::Installed,
                &plan.name,
                json!({"version": plan.version, "source": entry.source, "local": local}),
            ),
            Some(u) => self.audit.emit(
                AuditEvent::Upgraded,
                &plan.name,
                json!({"old_version": u.old_version, "new_version": plan.version,
                       "capability_diff": {"added": u.added, "removed": u.removed}}),
            ),
        }
        Ok(entry)
    }

    /// What the installed copy of `name` holds (files and bytes).
    pub fn installed_size(&self, name: &str) -> Result<InstalledSize, InstallError> {
        copy::size_of(&self.plugin_dir(name))
    }

    /// The store's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Record the operator's enable or disable (no process is touched:
    /// the supervisor does that).
    pub fn set_enabled(&self, name: &str, enabled: bool) -> Result<(), InstallError> {
        let mut registry = Registry::load(&self.root)?;
        let entry = registry
            .plugins
            .get_mut(name)
            .ok_or_else(|| InstallError::NotInstalled {
                name: name.to_string(),
            })?;
        entry.enabled = enabled;
        registry.save()
    }

    /// Uninstall `name`: refused while `active_sessions` use it unless
    /// `force`; then shuts down every session of `running` that runs this
    /// plugin (sessions of other plugins are left alone), drops its storage
    /// objects from `storage` (when given), removes its files and its
    /// local-config entry. See the module docs for what the simulator can
    /// and cannot stop.
    pub async fn uninstall(
        &self,
        name: &str,
        active_sessions: usize,
        force: bool,
        running: &[&PluginHandle],
        storage: Option<&StorageBroker>,
    ) -> Result<Uninstalled, InstallError> {
        let mut registry = Registry::load(&self.root)?;
        let Some(plugin) = registry.plugins.get(name).cloned() else {
            return Err(InstallError::NotInstalled {
                name: name.to_string(),
            });
        };
        if active_sessions > 0 && !force {
            return Err(InstallError::ActiveSessions {
                name: name.to_string(),
                sessions: active_sessions,
            });
        }
        let mut stopped = Vec::new();
        for session in running.iter().filter(|s| s.name() == name) {
            stopped.push(session.shutdown().await);
        }
        let dropped = match storage {
            Some(broker) => broker
                .uninstall(name)
                .map_err(|source| InstallError::Storage {
                    name: name.to_string(),
                    source,
                })?,
            None => Vec::new(),
        };
        let dir = self.plugin_dir(name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(InstallError::io_at(&dir))?;
        }
        registry.plugins.remove(name);
        registry.save()?;
        self.audit.emit(
            AuditEvent::Uninstalled,
            name,
            json!({"version": plugin.installed, "dropped_tables": dropped}),
        );
        Ok(Uninstalled {
            plugin,
            stopped,
            dropped,
        })
    }
}
