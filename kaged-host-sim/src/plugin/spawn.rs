//! Spawning a plugin process: command resolution (ADDENDUM §3), the Spawn
//! environment table, its own process group, piped stdio.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::API_VERSION;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// The restricted `PATH` of every plugin (Spawn environment).
pub const PLUGIN_PATH: &str = "/usr/bin:/usr/local/bin";

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

/// A started plugin process with its three pipes.
#[derive(Debug)]
pub struct SpawnedPlugin {
    /// The child (killed when dropped).
    pub child: Child,
    /// Its pid, which is also its process group id.
    pub pid: u32,
    /// Host writes here.
    pub stdin: ChildStdin,
    /// Host reads messages here.
    pub stdout: ChildStdout,
    /// Host reads logs here.
    pub stderr: ChildStderr,
    /// The absolute plugin directory.
    pub dir: PathBuf,
}

/// Start `manifest.command` for the plugin in `plugin_dir`: cwd is the
/// plugin directory, the environment is cleared and set by [`spawn_env`],
/// the process leads its own process group, stdio is piped and the child is
/// killed if dropped. Must be called inside a Tokio runtime.
pub fn spawn_plugin(
    manifest: &Manifest,
    plugin_dir: &Path,
    log_level: &str,
) -> Result<SpawnedPlugin, SpawnError> {
    let dir = std::fs::canonicalize(plugin_dir).map_err(|source| SpawnError::BadDir {
        dir: plugin_dir.to_path_buf(),
        source,
    })?;
    let program = manifest.command.first().ok_or(SpawnError::EmptyCommand)?;
    let exe = resolve_command(program, &dir)?;
    let mut cmd = Command::new(&exe);
    cmd.args(&manifest.command[1..])
        .current_dir(&dir)
        .env_clear()
        .envs(spawn_env(manifest, &dir, log_level))
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|source| match source.kind() {
        std::io::ErrorKind::PermissionDenied => SpawnError::NotExecutable { path: exe.clone() },
        _ => SpawnError::Exec {
            path: exe.clone(),
            source,
        },
    })?;
    let pid = child.id().unwrap_or_default();
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        // Unreachable with Stdio::piped(); handled without a panic anyway.
        return Err(SpawnError::Exec {
            path: exe,
            source: std::io::Error::other("stdio pipes missing"),
        });
    };
    Ok(SpawnedPlugin {
        child,
        pid,
        stdin,
        stdout,
        stderr,
        dir,
    })
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
