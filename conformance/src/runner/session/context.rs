//! [`RunContext`]: what every case reads and none changes, passed by `&`:
//! the plugin directory and its (valid) manifest, the options, the
//! effective timeouts, the cage, and the handles every spawn of the run
//! shares (the audit log the hosts write to, the storage broker).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kaged_host_core::audit::AuditLog;
use kaged_host_core::time::Timeouts;
use kaged_host_core::transcript::Transcript;
use kaged_host_core::PluginRequestHandler;
use kaged_host_core::{resolve_command, SpawnError};
use kaged_host_core::{FirstConfig, HostConfig, HostSim};
use kaged_host_core::{InFlight, InFlightWaiter};
use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::InitializeParams;

use super::cage::RunCage;
use crate::profile::Loaded;
use crate::runner::options::Options;

/// The `daemon_version` the suite announces.
pub(crate) const DAEMON_VERSION: &str = concat!("kaged-conformance/", env!("CARGO_PKG_VERSION"));

/// The read-only context of a run whose manifest validated.
pub(crate) struct RunContext {
    /// The plugin directory.
    pub dir: PathBuf,
    /// The plugin's manifest (it validated without errors).
    pub manifest: Arc<Manifest>,
    /// How the suite runs.
    pub options: Options,
    /// The manifest's timeouts at the run's time scale.
    pub timeouts: Timeouts,
    /// The run's audit log; every host of the run appends to it.
    pub audit: AuditLog,
    /// The run's storage broker (`--storage-db`, or a temporary database),
    /// shared by every spawn.
    storage: Arc<dyn PluginRequestHandler>,
    /// Waits for the plugin-to-host requests still being answered.
    pub in_flight: InFlightWaiter,
    /// How every spawn of the run is caged.
    pub cage: RunCage,
    /// The operator's config root of the run (`config:/` grants); a
    /// lane's own ([`RunContext::for_lane`]).
    pub config_root: PathBuf,
    /// Whether each lane gets a config root of its own beside the run's
    /// (a temporary run root), and how many were made.
    lane_roots: Option<Arc<std::sync::atomic::AtomicUsize>>,
    /// The conformance profile (`--conformance-profile`, or
    /// `kaged-conformance.yaml` beside the manifest), loaded and checked
    /// against the manifest.
    pub profile: Loaded,
    /// What every session is sent with `config.update` right after
    /// `initialized`, as the daemon does (ADDENDUM §12, §15, §16): a
    /// config valid for both schemas ([`crate::daemon_config`]), or their
    /// defaults when none could be generated.
    pub first_config: FirstConfig,
}

/// Why `command[0]` cannot be started.
#[derive(Debug)]
pub(crate) enum CommandError {
    /// The manifest's command is empty.
    Empty,
    /// `command[0]` does not resolve to an executable file.
    Unresolved(SpawnError),
}

impl RunContext {
    /// The context of a run of the plugin in `dir`, whose manifest is
    /// `manifest`, caged as `cage` with `config_root`.
    pub fn new(
        dir: &Path,
        manifest: Arc<Manifest>,
        options: &Options,
        audit: AuditLog,
        storage: InFlight,
        (cage, config_root): (RunCage, PathBuf),
    ) -> RunContext {
        RunContext {
            first_config: crate::schema_args::daemon_first_config(&manifest),
            profile: match (options.ignore_plugin_profile, options.profile.as_deref()) {
                (true, None) => Loaded::Absent,
                (_, explicit) => crate::profile::load_for_run(explicit, dir, &manifest),
            },
            cage,
            lane_roots: options
                .config_root
                .is_none()
                .then(|| Arc::new(std::sync::atomic::AtomicUsize::new(0))),
            config_root,
            dir: dir.to_path_buf(),
            timeouts: options.timeouts(Some(&manifest)),
            manifest,
            options: options.clone(),
            audit,
            in_flight: storage.waiter(),
            storage: Arc::new(storage),
        }
    }

    /// The context of one lane (`runner::run::lanes`): the same run, with the
    /// lane's own audit log and storage handler and, unless `--config-root`
    /// named the run's, a config root of its own (`own_root`), so that
    /// concurrent copies of the plugin never share a directory their
    /// grants write (issue 45). The root is made beside the run's
    /// (`ROOT-lane-N`) and removed when the returned guard drops.
    pub fn for_lane(
        &self,
        audit: AuditLog,
        storage: InFlight,
        own_root: bool,
    ) -> (RunContext, Option<LaneRoot>) {
        let lane_root = match (&self.lane_roots, own_root) {
            (Some(n), true) => {
                let n = n.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                LaneRoot::make(&self.config_root, n)
            }
            _ => None,
        };
        let config_root = lane_root
            .as_ref()
            .map_or_else(|| self.config_root.clone(), |r| r.path.clone());
        let ctx = RunContext {
            lane_roots: self.lane_roots.clone(),
            dir: self.dir.clone(),
            manifest: self.manifest.clone(),
            options: self.options.clone(),
            timeouts: self.timeouts,
            audit,
            in_flight: storage.waiter(),
            storage: Arc::new(storage),
            cage: self.cage.clone(),
            config_root,
            profile: self.profile.clone(),
            first_config: self.first_config.clone(),
        };
        (ctx, lane_root)
    }

    /// A host writing to the run's audit log and to `transcript`, with the
    /// run's storage broker.
    pub fn host(&self, transcript: Transcript) -> HostSim {
        HostSim::new(self.host_config(transcript))
    }

    /// [`RunContext::host`]'s configuration, to vary (the `initialize`
    /// params: `projects`, `storage_available`).
    pub fn host_config(&self, transcript: Transcript) -> HostConfig {
        HostConfig::default()
            .with_time_scale(self.options.time_scale)
            .with_adjust_timeouts(self.options.adjust_timeouts)
            .with_audit(self.audit.clone())
            .with_transcript(transcript)
            .with_daemon_version(DAEMON_VERSION)
            .with_storage(self.storage.clone())
            .with_cage(self.options.cage)
            .with_config_root(self.config_root.clone())
            .with_first_config(self.first_config.clone())
    }

    /// The config of [`RunContext::first_config`] (`{}` when it is off).
    pub fn daemon_config(&self) -> serde_json::Map<String, serde_json::Value> {
        self.first_config
            .for_manifest(&self.manifest)
            .unwrap_or_default()
    }

    /// The `initialize` params a host would send this plugin: those of
    /// [`RunContext::host`] ([`HostConfig::init_params`]).
    pub fn init_params(&self) -> InitializeParams {
        self.host_config(Transcript::discard())
            .init_params(&self.manifest)
    }

    /// `command[0]` resolved from the plugin directory, as the host
    /// resolves it when it spawns the plugin.
    pub fn command(&self) -> Result<PathBuf, CommandError> {
        let program = self.manifest.command.first().ok_or(CommandError::Empty)?;
        let dir = std::fs::canonicalize(&self.dir).unwrap_or_else(|_| self.dir.clone());
        resolve_command(program, &dir).map_err(CommandError::Unresolved)
    }
}

/// A lane's own config root, removed when dropped.
#[derive(Debug)]
pub(crate) struct LaneRoot {
    /// The directory: the run's root with `-lane-N` appended.
    pub path: PathBuf,
}

impl LaneRoot {
    /// `RUN-lane-n`, created (`None` when it cannot be: the lane then
    /// shares the run's root).
    fn make(run_root: &Path, n: usize) -> Option<LaneRoot> {
        let mut name = run_root.as_os_str().to_os_string();
        name.push(format!(
            "{}{n}",
            crate::runner::judge::diagnosis::LANE_ROOT_SUFFIX
        ));
        let path = PathBuf::from(name);
        std::fs::create_dir(&path).ok()?;
        Some(LaneRoot { path })
    }
}

impl Drop for LaneRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
