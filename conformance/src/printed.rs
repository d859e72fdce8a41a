//! What a plugin binary prints for a `--print-*` flag: every SDK plugin
//! answers `--print-manifest` with its `kaged-plugin.yaml` and
//! `--print-profile` with its `kaged-conformance.yaml`, generated from its
//! code. The conformance cases `manifest.current` and `profile.current`
//! compare them with the files on disk; `cargo kaged pack` writes them.
//! One way to ask, here: with no input, a bounded wait, and the process
//! killed when the wait runs out.

use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

pub(crate) use kaged_plugin_protocol::manifest::PRINT_MANIFEST_FLAG;
pub(crate) use kaged_plugin_protocol::profile::PRINT_PROFILE_FLAG;

/// Why a binary printed nothing to use.
#[derive(Debug, thiserror::Error)]
pub enum PrintError {
    /// It could not be started (or waited for).
    #[error("cannot run it: {0}")]
    Run(#[source] std::io::Error),
    /// It did not exit within the limit (it was killed).
    #[error("it did not answer within {0:?}")]
    Timeout(Duration),
    /// It exited unsuccessfully.
    #[error("it exited with {status} ({last_stderr})")]
    Failed {
        /// How it exited.
        status: ExitStatus,
        /// The last line it wrote to stderr.
        last_stderr: String,
    },
    /// It exited successfully with nothing on stdout.
    #[error("it printed nothing")]
    Empty,
}

/// Whether `path` is an executable (ELF or `#!` script) whose bytes
/// mention `flag`: the question is put only to a program that says it can
/// answer it (the daemon itself never runs these flags).
///
/// ```
/// use kaged_conformance::answers_flag;
/// use kaged_plugin_protocol::manifest::PRINT_MANIFEST_FLAG;
/// let dir = tempfile::tempdir().unwrap();
/// let script = dir.path().join("plugin.sh");
/// std::fs::write(&script, "#!/bin/sh\n[ \"$1\" = --print-manifest ] && cat kaged-plugin.yaml\n").unwrap();
/// assert!(answers_flag(&script, PRINT_MANIFEST_FLAG));
/// assert!(!answers_flag(&script, "--print-profile"));
/// ```
pub fn answers_flag(path: &Path, flag: &str) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    (bytes.starts_with(b"\x7fELF") || bytes.starts_with(b"#!"))
        && memchr::memmem::find(&bytes, flag.as_bytes()).is_some()
}

/// Why the program `command[0]` names (resolved to `bin`) is not asked
/// `flag`, or `None` when it is: only the plugin's own program can print
/// its manifest or profile. A system program (`command[0]` absolute or a
/// bare name found outside the plugin directory: an interpreter such as
/// `/usr/bin/python3` or `bun`) is not the plugin; a program of the
/// plugin's that does not mention `flag` was not built on the SDK.
pub(crate) fn not_asked(program: &str, bin: &Path, dir: &Path, flag: &str) -> Option<String> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let system = Path::new(program).is_absolute() || !program.contains('/');
    if system && !bin.starts_with(&dir) {
        return Some(format!(
            "command[0] is {}, a system program (an interpreter), not one of the plugin's own: only a program built on the SDK prints its {}; nothing to compare",
            bin.display(),
            flag.trim_start_matches("--print-")
        ));
    }
    if !answers_flag(bin, flag) {
        return Some(format!(
            "{} does not mention {flag} (not built on the SDK): nothing to compare",
            bin.display()
        ));
    }
    None
}

/// What `binary flag` prints on stdout, run in `dir` (or the current
/// directory) with stdin closed, waited for at most `limit` (then killed).
/// Blocking: from async code, call it in `spawn_blocking`.
pub fn print_flag(
    binary: &Path,
    flag: &str,
    dir: Option<&Path>,
    limit: Duration,
) -> Result<String, PrintError> {
    let mut command = Command::new(binary);
    command
        .arg(flag)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let child = command.spawn().map_err(PrintError::Run)?;
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(limit) {
        Ok(out) => out.map_err(PrintError::Run)?,
        Err(_) => {
            if let Some(pid) = i32::try_from(pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            return Err(PrintError::Timeout(limit));
        }
    };
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(PrintError::Failed {
            status: out.status,
            last_stderr: stderr.lines().last().unwrap_or_default().to_string(),
        });
    }
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if stdout.trim().is_empty() {
        return Err(PrintError::Empty);
    }
    Ok(stdout)
}

/// [`print_flag`] from async code: on a blocking thread.
pub(crate) async fn print_flag_async(
    binary: &Path,
    flag: &'static str,
    dir: &Path,
    limit: Duration,
) -> Result<String, PrintError> {
    let (binary, dir) = (binary.to_path_buf(), dir.to_path_buf());
    tokio::task::spawn_blocking(move || print_flag(&binary, flag, Some(&dir), limit))
        .await
        .unwrap_or_else(|e| Err(PrintError::Run(std::io::Error::other(e))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_plugins_own_program_is_asked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let own = dir.path().join("plugin.sh");
        std::fs::write(&own, "#!/bin/sh\n[ \"$1\" = --print-manifest ] && cat m\n").expect("write");
        let quiet = dir.path().join("quiet.sh");
        std::fs::write(&quiet, "#!/bin/sh\nexit 0\n").expect("write");
        let flag = PRINT_MANIFEST_FLAG;
        assert_eq!(not_asked("./plugin.sh", &own, dir.path(), flag), None);
        // A bare name found in the directory is the plugin's own.
        assert_eq!(not_asked("plugin.sh", &own, dir.path(), flag), None);
        let why = not_asked("./quiet.sh", &quiet, dir.path(), flag).expect("skipped");
        assert!(why.contains("does not mention --print-manifest"), "{why}");
        // An interpreter, absolute or bare, is never asked, even when its
        // bytes mention the flag.
        for (program, bin) in [
            ("/bin/sh", Path::new("/bin/sh")),
            ("sh", Path::new("/usr/bin/sh")),
        ] {
            let why = not_asked(program, bin, dir.path(), flag).expect("skipped");
            assert!(why.contains("a system program (an interpreter)"), "{why}");
        }
        // A relative path out of the directory (an in-tree build) is.
        let other = tempfile::tempdir().expect("tempdir");
        let built = other.path().join("echo");
        std::fs::copy(&own, &built).expect("copy");
        assert_eq!(not_asked("../x/echo", &built, dir.path(), flag), None);
    }
}
