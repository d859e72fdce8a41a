//! The [`CageInputs`] of a plugin directory on this machine, as the host
//! would spawn it: the Spawn environment, `command[0]` resolved, the
//! cgroup state detected. For previews (`kaged-host-sim cage DIR`); the
//! spawner, which computes the environment and the executable itself,
//! builds its [`CageInputs`] directly (and must not call this: it would
//! make the spawner preview itself).

use std::ffi::OsString;
use std::path::Path;

use kaged_plugin_protocol::manifest::Manifest;

use super::spawn::{resolve_command, spawn_env};
use crate::cage::{self, cgroup, CageError, CageInputs};

/// The inputs for `manifest` in `dir`, and the command the cage runs
/// (`command[0]` resolved, then the arguments). When `command[0]` cannot be
/// resolved, the command is left as written and not checked.
pub fn inputs_for_dir(
    manifest: &Manifest,
    dir: &Path,
    log_level: &str,
) -> Result<(CageInputs, Vec<OsString>), CageError> {
    let dir = std::fs::canonicalize(dir).map_err(|e| CageError::InstallDir {
        dir: dir.to_path_buf(),
        why: e.to_string(),
    })?;
    let mut inputs = CageInputs::new(&dir, spawn_env(manifest, &dir, log_level));
    let mut command: Vec<OsString> = manifest.command.iter().map(OsString::from).collect();
    if let Some(program) = manifest.command.first() {
        if let Ok(exe) = resolve_command(program, &dir) {
            // `dir` is canonical, so a lexical `..` after it is exact.
            let exe = cage::normalize(&exe);
            command[0] = exe.clone().into_os_string();
            inputs.command = Some(exe);
        }
    }
    inputs.cgroup = cgroup::detect();
    inputs.landlock = cage::LandlockSupport::detect();
    inputs.ids = cage::PluginIds::from_env().map_err(CageError::PluginIds)?;
    Ok((inputs, command))
}
