//! Project-load-driven install over the daemon's API (plugin-host.md
//! § Project-load-driven install, ADDENDUM §16).
//!
//! When `up --store DIR --project FILE` loads a project that declares
//! plugins the store lacks (or holds at a version the project refuses),
//! the project is *pending*: each such package becomes a consent request
//! (`plugin.consent_requested`), listed by `GET /api/v1/pending` and on the
//! settings page. The operator approves or refuses each one
//! (`POST /api/v1/pending/{plugin}/approve|refuse`):
//!
//! * a directory source shows its manifest (name, version, capabilities
//!   and where they land) at once; approving installs it;
//! * a git source shows only its URL: nothing is fetched without consent,
//!   so the first approval fetches it (`git clone`, see
//!   [`PackageSource`]) and shows the manifest, and a second approval
//!   installs what was shown;
//! * a version the project's `version:` refuses is never installed: the
//!   request says why, before anything is copied;
//! * no source: the request says to install it by hand.
//!
//! What is installed is `local = false`, enabled, for this project only.
//! Refusing (`plugin.install_declined`) keeps the project pending. When the
//! last request is installed, [`PendingInstalls::settled`] wakes: `up`
//! then loads the project and starts its plugins.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::json;

use kaged_host_core::audit::{AuditEvent, AuditLog};
use kaged_host_engine::agents::resolve::version_meets;
use kaged_host_engine::agents::Project;
use kaged_host_engine::{Fetched, InstallError, InstallPlan, PackageSource, PluginStore};

/// Where a consent request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PendingState {
    /// A git source not fetched yet: approving fetches it and shows its
    /// manifest.
    AwaitingFetch,
    /// The manifest is shown: approving installs it.
    AwaitingConsent,
    /// It cannot be installed as it is ([`PendingInstall::problem`] says
    /// why); approving tries the source again.
    Failed,
    /// The declaration names no source: install it by hand.
    NoSource,
    /// The operator refused it: the project stays pending.
    Refused,
}

/// What the operator is shown of a manifest before installing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanView {
    /// The manifest's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its description.
    pub description: String,
    /// Its capabilities, canonical.
    pub capabilities: Vec<String>,
    /// Where path capabilities land on this host.
    pub resolved: BTreeMap<String, String>,
    /// The manifest's and install's warnings.
    pub warnings: Vec<String>,
    /// The SHA-256 of the manifest shown.
    pub manifest_sha256: String,
}

impl From<&InstallPlan> for PlanView {
    fn from(p: &InstallPlan) -> PlanView {
        PlanView {
            name: p.name.clone(),
            version: p.version.clone(),
            description: p.description.clone(),
            capabilities: p.capabilities.clone(),
            resolved: p.resolved.clone(),
            warnings: p.warnings.clone(),
            manifest_sha256: p.manifest_sha256.clone(),
        }
    }
}

/// One consent request, as `GET /api/v1/pending` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingInstall {
    /// The package the project declares (`@kaged/notes`).
    pub package: String,
    /// The plugin name it answers to (the API's key).
    pub plugin: String,
    /// The declared source, resolved, as the operator is shown it.
    pub source: Option<String>,
    /// The project's `version:` requirement.
    pub version: Option<String>,
    /// Where it stands.
    pub state: PendingState,
    /// The manifest to consent to, once read.
    pub plan: Option<PlanView>,
    /// Why it cannot be installed as it is.
    pub problem: Option<String>,
}

/// One request and what was fetched for it.
struct Entry {
    view: PendingInstall,
    fetched: Option<Fetched>,
    /// A fetch or an install of it is under way (outside the lock).
    busy: bool,
}

/// Why an approval or refusal was not carried out.
#[derive(Debug, thiserror::Error)]
pub enum PendingError {
    /// No consent request names that plugin.
    #[error("no pending install named {0:?}")]
    Unknown(String),
    /// A fetch or an install of it is under way.
    #[error("{0:?} is being fetched or installed: wait for that answer")]
    Busy(String),
    /// The request cannot be approved in its state.
    #[error("{plugin:?} cannot be approved: {why}")]
    NotApprovable {
        /// The plugin.
        plugin: String,
        /// Why.
        why: String,
    },
}

/// The project's consent requests; see the module docs.
pub struct PendingInstalls {
    store: PluginStore,
    project_id: String,
    audit: AuditLog,
    entries: Mutex<Vec<Entry>>,
    settled: tokio::sync::Notify,
}

impl std::fmt::Debug for PendingInstalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingInstalls")
            .field("project_id", &self.project_id)
            .field("pending", &self.list())
            .finish_non_exhaustive()
    }
}

impl PendingInstalls {
    /// The consent requests `project` needs against `store`, each audited
    /// `plugin.consent_requested`; `None` when the store holds every
    /// declared package at a version the project accepts.
    pub fn for_project(
        store: PluginStore,
        project: &Project,
        audit: AuditLog,
    ) -> Result<Option<PendingInstalls>, InstallError> {
        let installed = store.list()?;
        let mut entries = Vec::new();
        for declared in project.declared_packages() {
            let plugin = declared.plugin_name().to_string();
            let have = installed.iter().find(|p| p.name == plugin);
            let accepted = |v: &str| {
                declared
                    .version
                    .as_deref()
                    .is_none_or(|r| version_meets(v, r))
            };
            if have.is_some_and(|p| accepted(&p.installed)) {
                continue;
            }
            let mut view = PendingInstall {
                package: declared.package.clone(),
                plugin,
                source: declared.source.clone(),
                version: declared.version.clone(),
                state: PendingState::NoSource,
                plan: None,
                problem: None,
            };
            let mut entry = Entry {
                view: view.clone(),
                fetched: None,
                busy: false,
            };
            if let Some(source) = &declared.source {
                view.state = PendingState::AwaitingFetch;
                entry.view = view;
                if let PackageSource::Dir(_) = PackageSource::parse(source) {
                    // A directory is only checked and read (nothing leaves
                    // this machine): show its manifest now.
                    fetch(&store, &mut entry);
                }
            }
            audit.emit(
                AuditEvent::ConsentRequested,
                &entry.view.plugin,
                json!({"package": entry.view.package, "source": entry.view.source,
                       "version": entry.view.version, "state": entry.view.state,
                       "project": project.id}),
            );
            entries.push(entry);
        }
        Ok((!entries.is_empty()).then(|| PendingInstalls {
            store,
            project_id: project.id.clone(),
            audit,
            entries: Mutex::new(entries),
            settled: tokio::sync::Notify::new(),
        }))
    }

    /// The requests not yet installed, in declaration order.
    pub fn list(&self) -> Vec<PendingInstall> {
        self.lock().iter().map(|e| e.view.clone()).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The operator's approval of `plugin`: fetch a git source (answering
    /// the request with its manifest shown), or install what was shown.
    /// Blocks (git, the copy): call it from `spawn_blocking`. The requests
    /// stay readable meanwhile: the slow work runs outside the lock, the
    /// request marked busy. Answers the request as it stands after, or
    /// `None` once installed.
    pub fn approve(&self, plugin: &str) -> Result<Option<PendingInstall>, PendingError> {
        let not = |why: &str| PendingError::NotApprovable {
            plugin: plugin.to_string(),
            why: why.to_string(),
        };
        let (view, fetched) = {
            let mut entries = self.lock();
            let entry = idle(&mut entries, plugin)?;
            if entry.view.state == PendingState::NoSource {
                return Err(not(
                    "the project names no source: install it with `plugin install PATH --for-project FILE`",
                ));
            }
            entry.busy = true;
            let fetched = match entry.view.state {
                PendingState::AwaitingConsent => entry.fetched.take(),
                _ => None,
            };
            (entry.view.clone(), fetched)
        };
        let mut work = Entry {
            view,
            fetched,
            busy: false,
        };
        let installed = match (
            work.view.state,
            work.fetched.as_ref(),
            work.view.plan.as_ref(),
        ) {
            (PendingState::AwaitingConsent, Some(fetched), Some(shown)) => {
                let digest = shown.manifest_sha256.clone();
                let result = self.store.install_for_project(
                    &fetched.dir,
                    &self.project_id,
                    work.view.version.as_deref(),
                    // Consent covers exactly the manifest shown.
                    |plan| plan.manifest_sha256 == digest,
                );
                match result {
                    Ok(_) => true,
                    Err(e) => {
                        work.view.state = PendingState::Failed;
                        work.view.problem = Some(match e {
                            InstallError::Declined { .. } => {
                                "the source's manifest changed since it was shown: approve again to see it".into()
                            }
                            e => kaged_plugin_protocol::error_chain::chain(&e),
                        });
                        false
                    }
                }
            }
            _ => {
                fetch(&self.store, &mut work);
                false
            }
        };
        let mut entries = self.lock();
        let Some(i) = entries.iter().position(|e| e.view.plugin == plugin) else {
            return Err(PendingError::Unknown(plugin.to_string()));
        };
        if installed {
            entries.remove(i);
            if entries.is_empty() {
                self.settled.notify_one();
            }
            return Ok(None);
        }
        entries[i] = work;
        Ok(Some(entries[i].view.clone()))
    }

    /// The operator's refusal of `plugin`: nothing is fetched or
    /// installed, the project stays pending.
    pub fn refuse(&self, plugin: &str) -> Result<PendingInstall, PendingError> {
        let mut entries = self.lock();
        let entry = idle(&mut entries, plugin)?;
        entry.view.state = PendingState::Refused;
        entry.fetched = None;
        self.audit.emit(
            AuditEvent::InstallDeclined,
            plugin,
            json!({"package": entry.view.package, "source": entry.view.source,
                   "project": self.project_id}),
        );
        Ok(entry.view.clone())
    }

    /// Wait until every request is installed (the project can load).
    pub async fn settled(&self) {
        if self.lock().is_empty() {
            return;
        }
        self.settled.notified().await;
    }
}

/// Fetch `entry`'s source and read its manifest.
fn fetch(store: &PluginStore, entry: &mut Entry) {
    let Some(source) = entry.view.source.clone() else {
        return;
    };
    match PackageSource::parse(&source).fetch(entry.view.version.as_deref()) {
        Ok(fetched) => {
            entry.fetched = Some(fetched);
            read(store, entry);
        }
        Err(e) => {
            entry.view.state = PendingState::Failed;
            entry.view.problem = Some(e.to_string());
        }
    }
}

/// The request for `plugin` in `entries`, when no fetch or install of it
/// is under way.
fn idle<'a>(entries: &'a mut [Entry], plugin: &str) -> Result<&'a mut Entry, PendingError> {
    let entry = entries
        .iter_mut()
        .find(|e| e.view.plugin == plugin)
        .ok_or_else(|| PendingError::Unknown(plugin.to_string()))?;
    if entry.busy {
        return Err(PendingError::Busy(plugin.to_string()));
    }
    Ok(entry)
}

/// Read what `entry` fetched (a directory, or a clone) into the plan
/// shown; a version the project refuses is a problem, not a plan.
fn read(store: &PluginStore, entry: &mut Entry) {
    let Some(fetched) = &entry.fetched else {
        return;
    };
    match store.plan(&fetched.dir) {
        Ok(plan) => {
            let required = entry.view.version.as_deref();
            if let Some(r) = required.filter(|r| !version_meets(&plan.version, r)) {
                entry.view.state = PendingState::Failed;
                entry.view.problem = Some(format!(
                    "{} {} does not meet the project's requirement `{r}`; nothing will be installed",
                    plan.name, plan.version
                ));
            } else {
                entry.view.state = PendingState::AwaitingConsent;
                entry.view.problem = None;
            }
            entry.view.plan = Some(PlanView::from(&plan));
        }
        Err(e) => {
            entry.view.state = PendingState::Failed;
            entry.view.problem = Some(kaged_plugin_protocol::error_chain::chain(&e));
        }
    }
}
