//! [`RunCage`]: how the run's spawns are caged (ADDENDUM §13), decided
//! once before any spawn: `--cage off`, or bwrap when it works here (else
//! `unavailable` under `auto`, and no run at all under `require`), with
//! the policy compiled from the manifest as every spawn of the run gets it.
//! The config root `config:/` grants resolve under is the run's too (a
//! temporary one unless `--config-root` names one).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kaged_host_core::cage::{self, CagePolicy, CageSummary};
use kaged_host_core::{CageKind, CageMode};
use kaged_plugin_protocol::manifest::Manifest;

use crate::runner::error::SuiteError;
use crate::runner::options::Options;

/// How the run's spawns are caged.
#[derive(Debug, Clone)]
pub(crate) struct RunCage {
    /// `bwrap`, `unavailable` or `off`.
    pub kind: CageKind,
    /// Why the plugin runs uncaged (`unavailable`, `off`).
    pub reason: Option<String>,
    /// The policy every spawn gets (or, uncaged under `auto`, would get).
    pub policy: Option<Arc<CagePolicy>>,
    /// Why the policy does not compile (the plugin cannot start caged).
    pub compile_error: Option<String>,
    /// The cage as the run's primary spawn got it (its cgroup applied or
    /// not), once it started: what the report states over the policy.
    pub applied: Option<CageSummary>,
}

impl RunCage {
    /// Whether bwrap cages here (`require` where it cannot is an error).
    pub async fn kind(mode: CageMode) -> Result<(CageKind, Option<String>), SuiteError> {
        if mode == CageMode::Off {
            return Ok((CageKind::Off, Some("--cage off".to_string())));
        }
        match cage::availability().await {
            Ok(_) => Ok((CageKind::Bwrap, None)),
            Err(reason) if mode == CageMode::Require => Err(SuiteError::CageUnavailable(reason)),
            Err(reason) => Ok((CageKind::Unavailable, Some(reason))),
        }
    }

    /// The cage of `manifest` in `dir` for a run of `kind`, `config:/`
    /// resolving under `config_root`.
    pub fn compile(
        kind: CageKind,
        reason: Option<String>,
        manifest: &Manifest,
        dir: &Path,
        config_root: &Path,
    ) -> RunCage {
        let mut run = RunCage {
            kind,
            reason,
            policy: None,
            compile_error: None,
            applied: None,
        };
        if kind == CageKind::Off {
            return run;
        }
        let compiled = kaged_host_core::cage_inputs_for_dir(manifest, dir, "info").and_then(
            |(mut inputs, _)| {
                let root =
                    std::fs::canonicalize(config_root).unwrap_or_else(|_| config_root.into());
                inputs.env.insert(
                    kaged_host_core::CONFIG_ROOT_ENV.to_string(),
                    root.display().to_string(),
                );
                inputs.config_root = Some(root);
                // Created first, as before each spawn, so that the policy
                // (the report's cage line, the cage diagnosis of a
                // failure) binds them as every spawn of the run does.
                cage::create_config_grants(manifest, &inputs);
                cage::compile(manifest, &inputs)
            },
        );
        match compiled {
            Ok(p) => run.policy = Some(Arc::new(p)),
            Err(e) => run.compile_error = Some(e.to_string()),
        }
        run
    }

    /// `summary` as a spawn got it, without the spawn's own cgroup path:
    /// the same report run after run, whatever the lanes or processes.
    pub fn as_reported(mut summary: CageSummary) -> CageSummary {
        if let Some(head) = summary.cgroup.split(" (").next() {
            summary.cgroup = head.to_string();
        }
        summary
    }

    /// The policy in brief, for the report.
    pub fn summary(&self) -> Option<CageSummary> {
        self.applied
            .clone()
            .or_else(|| self.policy.as_ref().map(|p| p.summary()))
    }
}

/// The run's config root: `--config-root`, or a temporary directory kept
/// (and removed) with the run.
pub(crate) struct ConfigRoot {
    /// The directory.
    pub path: PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

impl ConfigRoot {
    /// `options.config_root`, or a new temporary directory.
    pub fn for_run(options: &Options) -> Result<ConfigRoot, SuiteError> {
        if let Some(p) = &options.config_root {
            return Ok(ConfigRoot {
                path: p.clone(),
                _tmp: None,
            });
        }
        let tmp = tempfile::Builder::new()
            .prefix("kaged-conformance-config-")
            .tempdir()
            .map_err(SuiteError::ConfigRoot)?;
        Ok(ConfigRoot {
            path: tmp.path().to_path_buf(),
            _tmp: Some(tmp),
        })
    }
}
