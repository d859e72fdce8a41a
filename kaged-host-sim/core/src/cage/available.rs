//! Whether bwrap can cage here (ADDENDUM §13: "caged when bwrap is
//! installed and works"): found, then run once with the cage's namespace
//! flags. The answer is cached per bwrap path for the life of the process.
//!
//! The bwrap used is `$KAGED_BWRAP` when set (an absolute path: a bwrap
//! installed elsewhere, or a missing one to see how a tool behaves on a
//! machine without it), else `bwrap` on this process's `PATH`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use super::bwrap::BWRAP;

/// The environment variable naming the bwrap executable.
pub const BWRAP_ENV: &str = "KAGED_BWRAP";

/// How long the probe may take before bwrap is declared not working.
pub const PROBE_LIMIT: Duration = Duration::from_secs(10);

static CACHE: Mutex<Option<HashMap<PathBuf, Result<PathBuf, String>>>> = Mutex::new(None);

/// The bwrap to use: `$KAGED_BWRAP`, else `bwrap` found on `PATH`; the
/// error says why there is none.
pub fn bwrap_path() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(BWRAP_ENV).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_absolute() {
            Ok(p)
        } else {
            Err(format!(
                "${BWRAP_ENV} must be an absolute path, not {}",
                p.display()
            ))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(BWRAP))
        .find(|c| is_executable(c))
        .ok_or_else(|| {
            "bwrap is not installed (not on PATH); install bubblewrap (apt-get install bubblewrap)"
                .to_string()
        })
}

/// An executable regular file (one that `execve` may run by its mode).
pub(super) fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The bwrap that works here, or why plugins cannot be caged (probed once
/// per bwrap path; later calls answer from the cache).
pub async fn availability() -> Result<PathBuf, String> {
    let bwrap = bwrap_path()?;
    if let Some(known) = cached(&bwrap) {
        return known;
    }
    let answer = probe(&bwrap).await.map(|()| bwrap.clone());
    let mut g = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    g.get_or_insert_with(HashMap::new)
        .insert(bwrap, answer.clone());
    answer
}

fn cached(bwrap: &Path) -> Option<Result<PathBuf, String>> {
    let g = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    g.as_ref().and_then(|m| m.get(bwrap).cloned())
}

/// Run `bwrap --version` inside a cage made with the flags every plugin
/// cage uses (new namespaces, a new session, no capabilities).
async fn probe(bwrap: &Path) -> Result<(), String> {
    if !is_executable(bwrap) {
        return Err(format!("{} is missing or not executable", bwrap.display()));
    }
    let mut cmd = tokio::process::Command::new(bwrap);
    cmd.args([
        "--unshare-all",
        "--unshare-pid",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
    ])
    .arg(bwrap)
    .arg("--version")
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .kill_on_drop(true);
    // A root host runs bwrap as the plugin's own uid (`cage::stage`): the
    // probe does too, so that a machine where an unprivileged bwrap cannot
    // make its user namespace is found here, not at the first spawn.
    let drop_to = rustix::process::geteuid()
        .is_root()
        .then(|| super::user::PluginIds::from_env().unwrap_or(super::user::PluginIds::DEFAULT))
        .map(|ids| ids.first);
    if let Some(id) = drop_to {
        // SAFETY: only system calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || super::stage::become_id(id));
        }
    }
    let run = tokio::time::timeout(PROBE_LIMIT, cmd.output()).await;
    match run {
        Err(_) => Err(format!(
            "{} did not make a sandbox within {PROBE_LIMIT:?}",
            bwrap.display()
        )),
        Ok(Err(e)) => Err(format!("cannot run {}: {e}", bwrap.display())),
        Ok(Ok(out)) if out.status.success() => Ok(()),
        Ok(Ok(out)) => Err(format!(
            "{} cannot make a sandbox here{}: {}",
            bwrap.display(),
            drop_to.map_or_else(String::new, |id| format!(
                " as the unprivileged uid {id} plugins run as (are unprivileged user \
                 namespaces disabled?)"
            )),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}
