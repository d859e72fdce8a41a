//! The handlers, declared with `#[kaged_plugin]`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::SystemTime;

use kaged_plugin_sdk::{kaged_plugin, log, Call, Host, PluginError};
use serde_json::json;

use crate::api::{
    failure, invalid, not_installed, Available, CatalogUpdated, GetAnswer, Hit, InstallAnswer,
    InstallParams, ListAnswer, ListParams, Listed, NameParams, SearchAnswer, SearchParams,
    UninstallAnswer, CATALOG_UPDATED, DEFAULT_HISTORY, DEFAULT_LIMIT, MAX_LIMIT,
};
use crate::catalogue::Installed;
use crate::preset::{compare_versions, valid_name, valid_tag, PresetSpec, VersionOrder};
use crate::search;
use crate::source::{self, FilePreset, Scan, SourceError};
use crate::state::{Config, OhMyPi};

fn now() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

fn check_name(name: &str) -> Result<(), PluginError> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(invalid(
            "name",
            format!("{name:?} is not a preset name (1-64 characters: lowercase letters, digits and inner hyphens)"),
        ))
    }
}

fn blocking_failed(e: tokio::task::JoinError) -> PluginError {
    PluginError::new(format!("reading the preset directory failed: {e}"))
}

/// Send `catalog.updated`; the change is made either way, so a failure
/// to notify is only logged.
fn announce(host: &Host, update: &CatalogUpdated) {
    if let Err(e) = host.notify(CATALOG_UPDATED, update) {
        log::warn!(error = %e, "could not send catalog.updated");
    }
}

impl OhMyPi {
    async fn scan(&self) -> Result<Scan, PluginError> {
        let dir = self.preset_dir();
        tokio::task::spawn_blocking(move || source::scan(&dir))
            .await
            .map_err(blocking_failed)
    }

    async fn read_file(&self, name: &str) -> Result<FilePreset, PluginError> {
        let (dir, n) = (self.preset_dir(), name.to_owned());
        let read = tokio::task::spawn_blocking(move || source::read(&dir, &n))
            .await
            .map_err(blocking_failed)?;
        read.map_err(|e| {
            let data = match &e {
                SourceError::NotFound { name, dir, .. } => {
                    json!({"error": "preset_not_found", "name": name, "dir": dir})
                }
                SourceError::Invalid { path, .. } => {
                    json!({"error": "preset_invalid", "path": path})
                }
            };
            PluginError::new(e.to_string()).with_data(data)
        })
    }
}

fn available(file: &FilePreset, installed: Option<&Installed>) -> Available {
    Available {
        name: file.spec.name.clone().unwrap_or_default(),
        version: file.spec.version.clone(),
        description: file.spec.description.clone(),
        tags: file.spec.tags.clone(),
        path: file.path.display().to_string(),
        installed_version: installed.map(|i| i.version.clone()),
    }
}

#[kaged_plugin(
    name = "oh-my-pi",
    notifications("catalog.updated"),
    capabilities("read:fs:/opt/oh-my-pi", "kaged:storage:read", "kaged:storage:write"),
    manifest_base = "kaged-plugin.base.yaml"
)]
impl OhMyPi {
    /// The installed presets (optionally by name part and tag); with
    /// `available: true` also the preset directory's presets and which
    /// installed ones have a newer file.
    #[method("presets.list")]
    async fn list(&self, p: ListParams, call: Call) -> Result<ListAnswer, PluginError> {
        if let Some(tag) = p.tag.as_deref().filter(|t| !valid_tag(t)) {
            return Err(invalid("tag", format!("{tag:?} is not a tag")));
        }
        let storage = call.host.storage();
        let installed = self
            .catalogue
            .list(&storage, p.filter.as_deref(), p.tag.as_deref())
            .await?;
        let revision = self.catalogue.revision(&storage).await?;
        let mut presets: Vec<Listed> = installed
            .into_iter()
            .map(|preset| Listed {
                preset,
                update_available: None,
            })
            .collect();
        if !p.available {
            return Ok(ListAnswer {
                presets,
                revision,
                available: None,
                problems: Vec::new(),
            });
        }
        let scan = self.scan().await?;
        let mut all = BTreeMap::new();
        for i in self.catalogue.list(&storage, None, None).await? {
            all.insert(i.name.clone(), i);
        }
        for listed in &mut presets {
            let file = scan
                .presets
                .iter()
                .find(|f| f.spec.name.as_deref() == Some(&listed.preset.name));
            if let Some(f) = file {
                if compare_versions(&f.spec.version, &listed.preset.version) == VersionOrder::Newer
                {
                    listed.update_available = Some(f.spec.version.clone());
                }
            }
        }
        let wanted = |f: &&FilePreset| {
            let name = f.spec.name.as_deref().unwrap_or_default();
            p.filter.as_deref().is_none_or(|x| name.contains(x))
                && p.tag
                    .as_deref()
                    .is_none_or(|t| f.spec.tags.iter().any(|x| x == t))
        };
        let available = scan
            .presets
            .iter()
            .filter(wanted)
            .map(|f| available(f, f.spec.name.as_ref().and_then(|n| all.get(n))))
            .collect();
        Ok(ListAnswer {
            presets,
            revision,
            available: Some(available),
            problems: scan.problems,
        })
    }

    /// Rank installed and installable presets by the query's words in
    /// their names, tags and descriptions.
    #[method("presets.search")]
    async fn search(&self, p: SearchParams, call: Call) -> Result<SearchAnswer, PluginError> {
        let words = search::words(&p.query);
        if words.is_empty() {
            return Err(invalid("query", "needs at least one word"));
        }
        let limit = p.limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(invalid(
                "limit",
                format!("{limit} is not between 1 and {MAX_LIMIT}"),
            ));
        }
        let storage = call.host.storage();
        let mut hits: BTreeMap<String, Hit> = BTreeMap::new();
        for i in self.catalogue.matching(&storage, &words).await? {
            let score = search::score(&words, &i.name, &i.tags, &i.description);
            hits.insert(
                i.name.clone(),
                Hit {
                    name: i.name,
                    version: i.version,
                    description: i.description,
                    tags: i.tags,
                    installed: true,
                    available_version: None,
                    path: None,
                    score,
                },
            );
        }
        let mut problems = Vec::new();
        if !p.installed_only {
            let scan = self.scan().await?;
            problems = scan.problems;
            for f in scan.presets {
                let name = f.spec.name.clone().unwrap_or_default();
                let path = f.path.display().to_string();
                if let Some(hit) = hits.get_mut(&name) {
                    hit.available_version = Some(f.spec.version);
                    hit.path = Some(path);
                    continue;
                }
                let score = search::score(&words, &name, &f.spec.tags, &f.spec.description);
                if score > 0.0 {
                    hits.insert(
                        name.clone(),
                        Hit {
                            name,
                            version: f.spec.version.clone(),
                            description: f.spec.description,
                            tags: f.spec.tags,
                            installed: false,
                            available_version: Some(f.spec.version),
                            path: Some(path),
                            score,
                        },
                    );
                }
            }
        }
        let mut results: Vec<Hit> = hits.into_values().filter(|h| h.score > 0.0).collect();
        results.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(b.installed.cmp(&a.installed))
                .then(a.name.cmp(&b.name))
        });
        results.truncate(limit as usize);
        Ok(SearchAnswer { results, problems })
    }

    /// One installed preset with its settings and history.
    #[method("preset.get")]
    async fn get(&self, p: NameParams, call: Call) -> Result<GetAnswer, PluginError> {
        check_name(&p.name)?;
        let limit = p.history.unwrap_or(DEFAULT_HISTORY);
        if limit > MAX_LIMIT {
            return Err(invalid("history", format!("{limit} is over {MAX_LIMIT}")));
        }
        let storage = call.host.storage();
        let (preset, settings) = self
            .catalogue
            .get(&storage, &p.name)
            .await?
            .ok_or_else(|| not_installed(&p.name))?;
        let history = self
            .catalogue
            .history(&storage, &p.name, i64::from(limit))
            .await?;
        Ok(GetAnswer {
            preset,
            settings,
            history,
        })
    }

    /// Install (or update) a preset from the preset directory, or from an
    /// inline definition; `catalog.updated` follows any change.
    #[method("preset.install")]
    async fn install(&self, p: InstallParams, call: Call) -> Result<InstallAnswer, PluginError> {
        check_name(&p.name)?;
        let (spec, source): (PresetSpec, String) = match p.preset {
            Some(spec) => (
                spec.checked(&p.name).map_err(|e| invalid("preset", e))?,
                "inline".to_owned(),
            ),
            None => {
                let file = self.read_file(&p.name).await?;
                (file.spec, file.path.display().to_string())
            }
        };
        let storage = call.host.storage();
        let _one_at_a_time = self.writes.lock().await;
        let before = self.catalogue.get(&storage, &p.name).await?;
        if let Some((old, old_settings)) = &before {
            let same = old.version == spec.version
                && old.description == spec.description
                && old.tags == spec.tags
                && *old_settings == spec.settings
                && old.source == source;
            if same {
                return Ok(InstallAnswer {
                    installed: true,
                    action: "unchanged".into(),
                    preset: old.clone(),
                    previous_version: Some(old.version.clone()),
                    revision: self.catalogue.revision(&storage).await?,
                });
            }
            if compare_versions(&spec.version, &old.version) == VersionOrder::Older
                && !p.allow_downgrade
            {
                return Err(failure(
                    "preset_downgrade",
                    format!(
                        "{} {} is installed; installing the older {} needs allow_downgrade: true",
                        p.name, old.version, spec.version
                    ),
                    json!({"name": p.name, "installed_version": old.version, "version": spec.version}),
                ));
            }
        }
        let added = self
            .catalogue
            .upsert(&storage, &spec, &source, &now())
            .await?;
        let (preset, _) = self
            .catalogue
            .get(&storage, &p.name)
            .await?
            .ok_or_else(|| {
                PluginError::new(format!("{} vanished right after it was installed", p.name))
            })?;
        let revision = self.catalogue.revision(&storage).await?;
        let action = if added { "installed" } else { "updated" };
        announce(
            &call.host,
            &CatalogUpdated {
                source: "preset.install".into(),
                action: action.into(),
                name: p.name.clone(),
                version: preset.version.clone(),
                entries_added: u32::from(added),
                entries_updated: u32::from(!added),
                entries_removed: 0,
                revision,
                total: self.catalogue.total(&storage).await?,
            },
        );
        log::info!(preset = %p.name, version = %preset.version, action, "catalogue changed");
        Ok(InstallAnswer {
            installed: true,
            action: action.into(),
            preset,
            previous_version: before.map(|(old, _)| old.version),
            revision,
        })
    }

    /// Remove an installed preset; `catalog.updated` follows.
    #[method("preset.uninstall")]
    async fn uninstall(&self, p: NameParams, call: Call) -> Result<UninstallAnswer, PluginError> {
        check_name(&p.name)?;
        if p.history.is_some() {
            return Err(invalid("history", "only preset.get takes history"));
        }
        let storage = call.host.storage();
        let _one_at_a_time = self.writes.lock().await;
        let (old, _) = self
            .catalogue
            .get(&storage, &p.name)
            .await?
            .ok_or_else(|| not_installed(&p.name))?;
        if !self.catalogue.remove(&storage, &p.name).await? {
            return Err(not_installed(&p.name));
        }
        let revision = self.catalogue.revision(&storage).await?;
        announce(
            &call.host,
            &CatalogUpdated {
                source: "preset.uninstall".into(),
                action: "uninstalled".into(),
                name: p.name.clone(),
                version: old.version.clone(),
                entries_added: 0,
                entries_updated: 0,
                entries_removed: 1,
                revision,
                total: self.catalogue.total(&storage).await?,
            },
        );
        log::info!(preset = %p.name, "catalogue changed: uninstalled");
        Ok(UninstallAnswer {
            uninstalled: true,
            name: p.name,
            version: old.version,
            revision,
        })
    }

    /// Take a new config; `-32004` when `preset_dir` is not absolute.
    #[config]
    async fn configure(&self, config: Config) -> Result<(), PluginError> {
        if let Some(problem) = config.problem() {
            return Err(PluginError::config_invalid(format!(
                "invalid config: {problem}"
            )));
        }
        log::info!(preset_dir = %PathBuf::from(&config.preset_dir).display(), "configured");
        self.set_config(config);
        Ok(())
    }
}
