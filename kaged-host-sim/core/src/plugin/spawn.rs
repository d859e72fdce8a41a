//! Spawning a plugin process: command resolution (ADDENDUM §3), the Spawn
//! environment table, the cage (ADDENDUM §13, [`super::caged`]) or none,
//! its own process group, piped stdio.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::API_VERSION;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use super::caged::{self, CageRequest, CageRuntime, Prepared};
use crate::cage::{CageError, CageMode, CageStatus};

/// The restricted `PATH` of every plugin (Spawn environment).
pub const PLUGIN_PATH: &str = crate::cage::SPAWN_PATH;

/// The spawn environment variable naming the operator's config root, the
/// root of `config:/` paths (our decision: the spec's Spawn environment
/// table has no such variable, but a plugin granted `config:/x` must know
/// where that is; daemon-controlled like `KAGED_PLUGIN_DIR`).
pub const CONFIG_ROOT_ENV: &str = "KAGED_CONFIG_ROOT";

/// What the host gives every spawn besides the manifest.
#[derive(Debug, Clone)]
pub(crate) struct SpawnOptions {
    /// `KAGED_LOG_LEVEL`.
    pub log_level: String,
    /// Caged or not.
    pub cage: CageMode,
    /// The operator's config root (`config:/`), given to the plugin as
    /// [`CONFIG_ROOT_ENV`].
    pub config_root: Option<PathBuf>,
    /// The project root (`project:/`).
    pub project_root: Option<PathBuf>,
    /// How long bwrap may take to say which pid the cage has.
    pub cage_start: Duration,
}

/// Why a plugin process could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The plugin directory does not exist or cannot be resolved.
    #[error("plugin directory {dir} cannot be used")]
    BadDir {
        /// The directory.
        dir: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// `command` is empty.
    #[error("the manifest's command is empty")]
    EmptyCommand,
    /// `command[0]` names no file.
    #[error("plugin executable {path} not found")]
    NotFound {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// `command[0]` exists but cannot be executed.
    #[error("plugin executable {path} is not executable")]
    NotExecutable {
        /// The file.
        path: PathBuf,
    },
    /// The plugin cannot be caged: its cage does not compile (a grant
    /// whose symlinks leave it...) or the cage is required and bwrap cannot
    /// cage here.
    #[error("cannot cage the plugin: {0}")]
    Cage(#[from] CageError),
    /// The executable exists but the kernel could not run it (a missing
    /// `#!` interpreter, a bad binary format...).
    #[error("cannot execute {path}")]
    Exec {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl SpawnError {
    /// Whether the start failed for want of the host's own resources (its
    /// file descriptors, memory or processes: [`host_resources_exhausted`]
    /// anywhere in the cause chain), not for anything the plugin is: the
    /// same start may succeed once the host has them back, so the
    /// supervisor retries it instead of marking the plugin failed.
    pub fn is_host_side(&self) -> bool {
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(self);
        while let Some(e) = cause {
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(host_resources_exhausted)
            {
                return true;
            }
            cause = e.source();
        }
        false
    }
}

/// Whether `e` says the host itself ran out: `EMFILE` (this process's file
/// descriptors), `ENFILE` (the system's), `ENOMEM`, or `EAGAIN` (as
/// `fork` reports the process limit).
pub fn host_resources_exhausted(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM | libc::EAGAIN)
    )
}

/// Resolve `command[0]` (ADDENDUM §3): absolute paths are kept; a relative
/// path with a `/` is taken from the plugin directory; a bare name is taken
/// from the plugin directory when such a file exists there, else from the
/// plugin `PATH` (`/usr/bin:/usr/local/bin`) (our decision: the spec only
/// says "relative paths are resolved from the plugin's install directory").
pub fn resolve_command(program: &str, plugin_dir: &Path) -> Result<PathBuf, SpawnError> {
    let p = Path::new(program);
    let candidate = if p.is_absolute() {
        p.to_path_buf()
    } else if program.contains('/') {
        plugin_dir.join(p)
    } else {
        let local = plugin_dir.join(p);
        if local.exists() {
            local
        } else {
            PLUGIN_PATH
                .split(':')
                .map(|d| Path::new(d).join(p))
                .find(|c| c.exists())
                .unwrap_or(local)
        }
    };
    let meta = std::fs::metadata(&candidate).map_err(|_| SpawnError::NotFound {
        path: candidate.clone(),
    })?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(SpawnError::NotExecutable { path: candidate });
    }
    Ok(candidate)
}

/// The complete environment of a plugin: the Spawn environment table, the
/// manifest `env` merged on top, then the daemon-controlled variables
/// (`KAGED_PLUGIN_NAME`, `KAGED_PLUGIN_DIR`, `KAGED_API_VERSION`) forced
/// back (`plugin_dir` should be absolute).
pub fn spawn_env(
    manifest: &Manifest,
    plugin_dir: &Path,
    log_level: &str,
) -> BTreeMap<String, String> {
    let dir = plugin_dir.to_string_lossy().into_owned();
    let mut env = BTreeMap::new();
    env.insert("KAGED_LOG_LEVEL".to_string(), log_level.to_string());
    env.insert("HOME".to_string(), dir.clone());
    env.insert("PATH".to_string(), PLUGIN_PATH.to_string());
    env.insert("LANG".to_string(), "C.UTF-8".to_string());
    for (k, v) in &manifest.env {
        env.insert(k.clone(), v.clone());
    }
    env.insert("KAGED_PLUGIN_NAME".to_string(), manifest.name.clone());
    env.insert("KAGED_PLUGIN_DIR".to_string(), dir);
    env.insert("KAGED_API_VERSION".to_string(), API_VERSION.to_string());
    env
}

/// Set [`CONFIG_ROOT_ENV`] to `root` (resolved, so that it names the path
/// the cage binds), over anything the manifest's `env` said.
pub fn set_config_root(env: &mut BTreeMap<String, String>, root: Option<&Path>) {
    if let Some(root) = root {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        env.insert(
            CONFIG_ROOT_ENV.to_string(),
            root.to_string_lossy().into_owned(),
        );
    }
}

/// A started plugin process with its three pipes.
#[derive(Debug)]
pub struct SpawnedPlugin {
    /// The child (killed when dropped): the plugin, or bwrap when caged.
    pub child: Child,
    /// The plugin's process group id: the plugin's pid uncaged; caged, the
    /// pid of the cage's first process (bwrap's init in the cage's pid
    /// namespace), which leads the group of the plugin and its children.
    pub pid: u32,
    /// Host writes here.
    pub stdin: ChildStdin,
    /// Host reads messages here.
    pub stdout: ChildStdout,
    /// Host reads logs here (bwrap's own messages too, when caged).
    pub stderr: ChildStderr,
    /// The absolute plugin directory.
    pub dir: PathBuf,
    /// Caged or not, and the policy.
    pub cage: CageStatus,
    /// bwrap and the cgroup of a caged spawn.
    pub(crate) runtime: Option<CageRuntime>,
}

/// Start `manifest.command` for the plugin in `plugin_dir`: cwd is the
/// plugin directory, the environment is cleared and set by [`spawn_env`]
/// (and [`set_config_root`]), the process leads its own process group,
/// stdio is piped and the child is killed if dropped. Caged by
/// `options.cage` (see [`crate::cage::CageMode`]). Must be called inside a
/// Tokio runtime.
pub(crate) async fn spawn_plugin(
    manifest: &Manifest,
    plugin_dir: &Path,
    options: &SpawnOptions,
) -> Result<SpawnedPlugin, SpawnError> {
    let dir = std::fs::canonicalize(plugin_dir).map_err(|source| SpawnError::BadDir {
        dir: plugin_dir.to_path_buf(),
        source,
    })?;
    let program = manifest.command.first().ok_or(SpawnError::EmptyCommand)?;
    let exe = resolve_command(program, &dir)?;
    let mut env = spawn_env(manifest, &dir, &options.log_level);
    set_config_root(&mut env, options.config_root.as_deref());
    let request = CageRequest {
        mode: options.cage,
        config_root: options.config_root.as_deref(),
        project_root: options.project_root.as_deref(),
    };
    match caged::prepare(manifest, &dir, &exe, &env, &request).await? {
        Prepared::Uncaged(status) => {
            let mut cmd = Command::new(&exe);
            cmd.args(&manifest.command[1..])
                .current_dir(&dir)
                .env_clear()
                .envs(&env);
            let host = rustix::process::getpid();
            // SAFETY: the closure only makes system calls (fds.rs,
            // parent_death.rs).
            unsafe {
                cmd.pre_exec(move || {
                    super::fds::cloexec_from_3()?;
                    super::parent_death::die_with(host)
                });
            }
            let (child, pipes) = start(cmd, &exe)?;
            let pid = child.id().unwrap_or_default();
            Ok(pipes.into_spawned(child, pid, dir, *status, None))
        }
        Prepared::Caged(mut plan) => {
            let command = caged::command_line(&exe, &manifest.command[1..]);
            let started = plan
                .command(&command)
                .map_err(SpawnError::from)
                .and_then(|cmd| start(cmd, &plan.bwrap));
            let (child, pipes) = match started {
                Ok(s) => s,
                Err(e) => {
                    plan.abandon();
                    return Err(e);
                }
            };
            let bwrap_pid = child.id().unwrap_or_default();
            let (pid, runtime, status) = (*plan).started(bwrap_pid, options.cage_start).await;
            Ok(pipes.into_spawned(child, pid, dir, status, Some(runtime)))
        }
    }
}

/// The three pipes of a started child.
struct Pipes {
    stdin: ChildStdin,
    stdout: ChildStdout,
    stderr: ChildStderr,
}

impl Pipes {
    fn into_spawned(
        self,
        child: Child,
        pid: u32,
        dir: PathBuf,
        cage: CageStatus,
        runtime: Option<CageRuntime>,
    ) -> SpawnedPlugin {
        SpawnedPlugin {
            child,
            pid,
            stdin: self.stdin,
            stdout: self.stdout,
            stderr: self.stderr,
            dir,
            cage,
            runtime,
        }
    }
}

/// Start `cmd` (running `exe`) in its own process group with piped stdio.
fn start(mut cmd: Command, exe: &Path) -> Result<(Child, Pipes), SpawnError> {
    cmd.process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|source| {
        // EACCES or EPERM from a file that has its execute bits came from
        // the set-up in the child (the cage's descriptors, cgroup, rlimits,
        // Landlock), not from the file: say what failed, not "not
        // executable".
        use crate::cage::FsView;
        let runnable = crate::cage::HostFs.executable(exe).unwrap_or(false);
        match source.kind() {
            std::io::ErrorKind::PermissionDenied if !runnable => SpawnError::NotExecutable {
                path: exe.to_path_buf(),
            },
            _ => SpawnError::Exec {
                path: exe.to_path_buf(),
                source,
            },
        }
    })?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        // Unreachable with Stdio::piped(); handled without a panic anyway.
        return Err(SpawnError::Exec {
            path: exe.to_path_buf(),
            source: std::io::Error::other("stdio pipes missing"),
        });
    };
    Ok((
        child,
        Pipes {
            stdin,
            stdout,
            stderr,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_env_merges_but_cannot_override_daemon_variables() {
        let m = Manifest::from_yaml_str(
            "name: demo\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [./run]\n\
             capabilities: []\nenv: {KAGED_PLUGIN_NAME: evil, LOG_LEVEL: debug}\n",
        )
        .unwrap();
        let env = spawn_env(&m, Path::new("/opt/demo"), "info");
        assert_eq!(env["KAGED_PLUGIN_NAME"], "demo");
        assert_eq!(env["LOG_LEVEL"], "debug");
        assert_eq!(env["PATH"], "/usr/bin:/usr/local/bin");
    }
}
