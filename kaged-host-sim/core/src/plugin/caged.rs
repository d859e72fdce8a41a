//! Spawning through the cage (ADDENDUM §13): decide (the [`CageMode`] and
//! whether bwrap works), compile the policy, start bwrap with the policy's
//! argv, the seccomp program on one descriptor and `--info-fd` on another,
//! and learn the cage's pid.
//!
//! ```text
//!  host ──spawn──▶ bwrap (own process group)
//!                    └─ bwrap init, pid 1 of the cage   ◀── pid / pgid reported by --info-fd
//!                         └─ the plugin, pid 2           (same group and session, --new-session)
//!                              └─ its children           (setsid ones too: they die with the cage)
//! ```
//!
//! Why not `--as-pid-1` (the ADDENDUM's note describes both): as pid 1
//! the plugin would never see a SIGTERM it does not handle (the kernel
//! drops signals without a handler for a namespace's init), so the
//! shutdown ladder's SIGTERM stage would silently not exist for most
//! plugins. With bwrap's init as pid 1, SIGTERM to the cage's group
//! reaches the plugin with its normal meaning (init ignores it, having no
//! handler), SIGKILL to the group ends the whole cage, and when the
//! plugin exits, init exits and the kernel kills everything left in the
//! cage. bwrap reports a plugin killed by signal N as exit code 128 + N;
//! [`super::process::ExitInfo`] reads it back.
//!
//! Descriptors: the seccomp pipe and the info pipe's write end are
//! close-on-exec in the host and placed at [`INFO_FD`] and
//! [`SECCOMP_FD`] in the child only (in `pre_exec`), so no other process
//! inherits them. A cgroup, when one could be created with limits, is
//! entered by the child before it runs bwrap, so that every process of the
//! cage is in it from the start; it is removed when the cage ends. The
//! child also marks every other inherited descriptor close-on-exec first
//! (the plugin gets 0, 1, 2 only: `fds`) and sets the cage's rlimits
//! (`cage::limits`).
//!
//! On a root host the child runs bwrap as the plugin's own uid
//! (`cage::user`): first, still root, it stages the bind sources in a
//! mount namespace of its own (`cage::stage`: the copies the host made of
//! the mounts it opened, idmapped for grants), enters the cgroup and sets
//! the rlimits, then drops its groups, gid and uid; Landlock and the
//! descriptors come after. bwrap then binds `/tmp/N` (visible to it alone)
//! instead of a descriptor.

use std::collections::BTreeMap;
use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kaged_plugin_protocol::manifest::Manifest;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

use crate::cage::{
    self, cgroup, seccomp, CageError, CageFds, CageInputs, CageMode, CagePolicy, CageStatus,
};

/// Where the child finds bwrap's `--info-fd`.
pub const INFO_FD: RawFd = 3;
/// Where the child finds bwrap's `--seccomp` program.
pub const SECCOMP_FD: RawFd = 4;
/// Where the child finds the first bind source (`--bind-fd`,
/// `--ro-bind-fd`), the others after it in mount order (`cage::sources`).
pub const BIND_FD_FIRST: RawFd = 5;

/// What [`prepare`] decided.
pub(crate) enum Prepared {
    /// Run the plugin directly.
    Uncaged(Box<CageStatus>),
    /// Run it in bwrap.
    Caged(Box<CagePlan>),
}

/// A caged spawn about to start.
pub(crate) struct CagePlan {
    /// The bwrap executable.
    pub(crate) bwrap: PathBuf,
    cage_id: String,
    policy: CagePolicy,
    fds: Option<(OwnedFd, OwnedFd, OwnedFd)>,
    /// The bind sources, open until bwrap has started.
    binds: Option<cage::OpenedBinds>,
    /// The plugin's name, and the host's part of a filtered network.
    plugin: String,
    net: Option<cage::net_filter::HostPlan>,
}

/// bwrap and the cgroup of a running cage.
#[derive(Debug)]
pub(crate) struct CageRuntime {
    /// bwrap's own pid (the host's child, leading its own process group).
    pub(crate) bwrap_pid: u32,
    /// The cage's cgroups (v1: one per controller), removed by
    /// [`CageRuntime::release`].
    cgroup: Vec<PathBuf>,
    /// The supervisor of a filtered network (`cage::net_filter`).
    _net: Option<cage::net_filter::Supervisor>,
}

impl CageRuntime {
    /// Remove the cage's cgroups once its processes are gone (when bwrap
    /// has exited, the kernel has ended every process of the cage's pid
    /// namespace); a cgroup the kernel refuses to remove yet is kept for a
    /// later call, the drop, or the next spawn's sweep.
    pub(crate) fn release(&mut self) {
        self.cgroup.retain(|path| match cgroup::remove(path) {
            Ok(()) => false,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => {
                tracing::debug!(cgroup = %path.display(), error = %e, "the cage's cgroup is not empty yet");
                true
            }
        });
    }

    /// [`CageRuntime::release`], retried briefly while the kernel still
    /// counts an exiting process in a cgroup (seen now and then on v1
    /// hierarchies right after bwrap was reaped): at most
    /// [`RELEASE_TRIES`] tries, [`RELEASE_PAUSE`] apart.
    pub(crate) async fn release_settled(&mut self) {
        for _ in 0..RELEASE_TRIES {
            self.release();
            if self.cgroup.is_empty() {
                return;
            }
            tokio::time::sleep(RELEASE_PAUSE).await;
        }
    }
}

/// How many times [`CageRuntime::release_settled`] tries.
pub(crate) const RELEASE_TRIES: u32 = 20;
/// The pause between two of its tries.
pub(crate) const RELEASE_PAUSE: Duration = Duration::from_millis(5);

impl Drop for CageRuntime {
    fn drop(&mut self) {
        self.release();
    }
}

/// A new cage id: this host's pid, the time it started, and a counter.
fn next_cage_id() -> String {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    static START: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let start = *START.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    });
    let n = COUNT.fetch_add(1, Ordering::SeqCst);
    format!("{:x}-{start:x}-{n}", std::process::id())
}

/// The command bwrap runs: the resolved executable, then the arguments.
pub(crate) fn command_line(exe: &Path, args: &[String]) -> Vec<OsString> {
    let mut v = vec![cage::normalize(exe).into_os_string()];
    v.extend(args.iter().map(OsString::from));
    v
}

/// What [`prepare`] needs of the host's configuration.
pub(crate) struct CageRequest<'a> {
    /// Caged or not.
    pub(crate) mode: CageMode,
    /// The operator's config root (`config:/`).
    pub(crate) config_root: Option<&'a Path>,
    /// The project root (`project:/`).
    pub(crate) project_root: Option<&'a Path>,
}

/// Decide how to run the plugin and, unless `off`, compile its cage.
pub(crate) async fn prepare(
    manifest: &Manifest,
    dir: &Path,
    exe: &Path,
    env: &BTreeMap<String, String>,
    options: &CageRequest<'_>,
) -> Result<Prepared, CageError> {
    if options.mode == CageMode::Off {
        return Ok(Prepared::Uncaged(Box::new(CageStatus::off())));
    }
    if let Some(root) = options.config_root {
        std::fs::create_dir_all(root).map_err(|e| CageError::Inspect {
            what: "the config root".to_string(),
            path: root.to_path_buf(),
            source: e,
        })?;
    }
    let mut inputs = CageInputs::new(dir, env.clone());
    inputs.command = Some(cage::normalize(exe));
    inputs.config_root = options.config_root.map(Path::to_path_buf);
    inputs.project_root = options.project_root.map(Path::to_path_buf);
    inputs.cgroup = cgroup::detect();
    inputs.landlock = cage::LandlockSupport::detect();
    inputs.ids = cage::PluginIds::from_env().map_err(CageError::PluginIds)?;
    cage::create_config_grants(manifest, &inputs);
    let policy = cage::compile(manifest, &inputs)?;
    match cage::availability().await {
        Ok(bwrap) => Ok(Prepared::Caged(Box::new(CagePlan {
            bwrap,
            cage_id: next_cage_id(),
            policy,
            fds: None,
            binds: None,
            plugin: manifest.name.clone(),
            net: None,
        }))),
        Err(reason) if options.mode == CageMode::Require => Err(CageError::Unavailable { reason }),
        Err(reason) => {
            tracing::warn!(
                plugin = manifest.name,
                %reason,
                "plugins run UNCAGED: bwrap cannot cage here (--cage auto)"
            );
            Ok(Prepared::Uncaged(Box::new(CageStatus::unavailable(
                reason, policy,
            ))))
        }
    }
}

fn setup(what: &'static str) -> impl Fn(std::io::Error) -> CageError {
    move |source| CageError::Setup { what, source }
}

impl CagePlan {
    /// The bwrap command for `command`: the cgroup created (when it can
    /// be), the descriptors made, and the child told to place them.
    pub(crate) fn command(&mut self, command: &[OsString]) -> Result<Command, CageError> {
        self.policy.cgroup.state = cgroup::create_for(
            &self.policy.cgroup.state,
            &self.cage_id,
            &self.policy.cgroup.wanted,
        );
        let rlimits = cage::limits::rlimits_for_child(&self.policy.limits);
        let program = seccomp::default_program()?;
        let seccomp_fd = seccomp::program_fd(&program).map_err(setup("the seccomp pipe"))?;
        let (info_read, info_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
            .map_err(|e| setup("the info pipe")(e.into()))?;
        // The Landlock filesystem rules are entered in the cage, by the
        // host's own executable run first (`cage::init`).
        let command = self.init_command(command);
        // Every bind source opened now, once, with no link followed; bwrap
        // mounts these descriptors, not paths (ADDENDUM §16).
        let binds = cage::OpenedBinds::open(&self.policy)?;
        cage::race_hook::run(&self.policy.chdir);
        // A root host runs bwrap as the plugin's own uid, from sources
        // staged in the child's own mount namespace (ADDENDUM §16).
        let staging = match self.policy.user.own_id() {
            Some(id) => Some(cage::stage::Staging::prepare(&self.policy, &binds, id)?),
            None => None,
        };
        if let Some(staging) = &staging {
            for (path, why) in &staging.not_idmapped {
                self.policy.notes.push(format!(
                    "{} is not idmapped ({why}): the plugin has the rights of its own uid there",
                    path.display()
                ));
            }
        }
        // Staged binds by path; the rest (the hosts file's content) by
        // descriptor.
        let by_fd = binds.fd_sources(BIND_FD_FIRST);
        let sources = match &staging {
            Some(staging) => staging
                .paths()
                .iter()
                .zip(by_fd)
                .map(|(path, fd)| path.clone().map(cage::BindSource::Staged).or(fd))
                .collect(),
            None => by_fd,
        };
        let argv = self.policy.bwrap_argv(
            &command,
            &CageFds {
                info: Some(INFO_FD),
                seccomp: SECCOMP_FD,
                binds: sources,
            },
        );
        let entries: Vec<CString> = self
            .policy
            .cgroup
            .state
            .entry_files()
            .into_iter()
            .map(|file| {
                CString::new(file.as_os_str().as_bytes())
                    .map_err(|e| setup("the cgroup path")(std::io::Error::other(e)))
            })
            .collect::<Result<_, _>>()?;
        let mut cmd = Command::new(&self.bwrap);
        cmd.args(argv).env_clear();
        // The Landlock layer, made before the fork; the child only enters it.
        let landlock = self
            .policy
            .landlock
            .ruleset()
            .map_err(|e| setup("the Landlock ruleset")(std::io::Error::other(e)))?;
        let mut placements = vec![
            (info_write.as_raw_fd(), INFO_FD),
            (seccomp_fd.as_raw_fd(), SECCOMP_FD),
        ];
        match &staging {
            Some(staging) => placements
                .extend(binds.placements_where(BIND_FD_FIRST, |i| staging.paths()[i].is_none())),
            None => placements.extend(binds.placements(BIND_FD_FIRST)),
        }
        let (net_child, net_host) = cage::net_filter::prepare(&self.policy)?.unzip();
        let mut child = super::cage_child::ChildSteps {
            own_id: staging.as_ref().map(|s| s.id()),
            staging,
            cgroup_entries: entries,
            rlimits,
            landlock,
            net: net_child,
            scratch: vec![-1; placements.len()],
            placements,
            host: rustix::process::getpid(),
        };
        // SAFETY: `ChildSteps::run` only makes system calls (no
        // allocation, no lock), on values built before the fork (see its
        // documentation).
        unsafe {
            cmd.pre_exec(move || child.run());
        }
        self.fds = Some((info_read, info_write, seccomp_fd));
        self.binds = Some(binds);
        self.net = net_host;
        Ok(cmd)
    }

    /// After bwrap (pid `bwrap_pid`) started: close the host's copies of
    /// the child's descriptors, read the cage's pid (within `limit`), and
    /// say how the plugin runs. When bwrap reports no pid (it failed before
    /// making the cage, and says why on stderr), bwrap's own pid stands in.
    pub(crate) async fn started(
        mut self,
        bwrap_pid: u32,
        limit: Duration,
    ) -> (u32, CageRuntime, CageStatus) {
        self.binds = None;
        let pid = match self.fds.take() {
            Some((info_read, info_write, seccomp_fd)) => {
                drop(info_write);
                drop(seccomp_fd);
                read_child_pid(info_read, limit).await
            }
            None => Err("no descriptors".to_string()),
        };
        let pid = pid.unwrap_or_else(|why| {
            tracing::warn!(bwrap_pid, %why, "bwrap did not report the cage's pid");
            bwrap_pid
        });
        let cgroup = self
            .policy
            .cgroup
            .state
            .dirs()
            .into_iter()
            .map(Path::to_path_buf)
            .collect();
        let net = self.net.take().and_then(|h| h.start(&self.plugin));
        let runtime = CageRuntime {
            bwrap_pid,
            cgroup,
            _net: net,
        };
        (pid, runtime, CageStatus::caged(self.cage_id, self.policy))
    }
}

impl CagePlan {
    /// `command`, run through the cage's init when the Landlock
    /// filesystem rules are to be entered (the init bound read-only in the
    /// policy); as it is, with the reason said, when they cannot be.
    fn init_command(&mut self, command: &[OsString]) -> Vec<OsString> {
        if !self.policy.landlock.fs_enforced {
            return command.to_vec();
        }
        match cage::init::init_executable() {
            Ok(exe) => {
                self.policy.mounts.push(cage::Mount::Bind {
                    source: exe,
                    dest: PathBuf::from(cage::init::INIT_DEST),
                    mode: cage::Mode::Ro,
                    missing: false,
                    because: vec![cage::init::BECAUSE_INIT.to_string()],
                });
                cage::init::wrap(&self.policy.landlock.fs, command)
            }
            Err(why) => {
                self.policy.landlock.fs_not_enforced(why);
                command.to_vec()
            }
        }
    }

    /// The spawn failed: remove the cgroup made for it.
    pub(crate) fn abandon(&self) {
        for path in self.policy.cgroup.state.dirs() {
            let _ = cgroup::remove(path);
        }
    }
}

/// Read bwrap's `--info-fd` JSON to its end and return `child-pid`.
async fn read_child_pid(read: OwnedFd, limit: Duration) -> Result<u32, String> {
    let mut rx =
        tokio::net::unix::pipe::Receiver::from_owned_fd(read).map_err(|e| e.to_string())?;
    let mut text = Vec::new();
    match tokio::time::timeout(limit, rx.read_to_end(&mut text)).await {
        Err(_) => return Err(format!("nothing within {limit:?}")),
        Ok(Err(e)) => return Err(e.to_string()),
        Ok(Ok(_)) => {}
    }
    let v: serde_json::Value = serde_json::from_slice(&text)
        .map_err(|e| format!("{e} in {:?}", String::from_utf8_lossy(&text)))?;
    v.get("child-pid")
        .and_then(serde_json::Value::as_u64)
        .and_then(|p| u32::try_from(p).ok())
        .ok_or_else(|| format!("no child-pid in {v}"))
}
