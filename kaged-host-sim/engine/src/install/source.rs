//! Where a project-declared package comes from (plugin-host.md § Source
//! resolution) and fetching it: a directory is used where it is; a git
//! source (`https://…`, `git+https://…`, `file://…`, `git+file://…`) is
//! cloned with the system's `git`, shallow, at the tag of the declared
//! version when there is one (`v1.2.0`, else `1.2.0`), else at its default
//! branch. Only after the operator's consent: the caller asks first.
//!
//! ```
//! use kaged_host_engine::PackageSource;
//! assert_eq!(
//!     PackageSource::parse("git+https://example.com/notes.git"),
//!     PackageSource::Git { url: "https://example.com/notes.git".into() }
//! );
//! assert_eq!(
//!     PackageSource::parse("/srv/plugins/notes"),
//!     PackageSource::Dir("/srv/plugins/notes".into())
//! );
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use kaged_host_core::time::GIT_FETCH_TIMEOUT;

use super::error::InstallError;

/// A package's `source:`, as install reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageSource {
    /// A directory (a `./relative` source already resolved against the
    /// project root).
    Dir(PathBuf),
    /// A git repository, its URL without a `git+` scheme prefix.
    Git {
        /// What `git clone` is given.
        url: String,
    },
}

impl PackageSource {
    /// Read a resolved `source:` value.
    pub fn parse(source: &str) -> PackageSource {
        match source.strip_prefix("git+") {
            Some(url) => PackageSource::Git { url: url.into() },
            None if source.contains("://") => PackageSource::Git { url: source.into() },
            None => PackageSource::Dir(source.into()),
        }
    }

    /// Fetch it (a directory: checked in place; git: cloned into a
    /// temporary directory kept alive by the answer).
    pub fn fetch(&self, version: Option<&str>) -> Result<Fetched, InstallError> {
        match self {
            PackageSource::Dir(dir) if dir.is_dir() => Ok(Fetched {
                dir: dir.clone(),
                _temp: None,
            }),
            PackageSource::Dir(dir) => Err(InstallError::Fetch {
                source_text: dir.display().to_string(),
                message: "not a directory".into(),
            }),
            PackageSource::Git { url } => clone(url, version),
        }
    }
}

/// A fetched package: the directory to install from.
#[derive(Debug)]
pub struct Fetched {
    /// The plugin directory (the clone's root for a git source).
    pub dir: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

/// The tags a declared version may be published under: `v1.2.0`, `1.2.0`,
/// for an exact version (a requirement such as `^1.2` names no tag).
fn version_tags(version: Option<&str>) -> Vec<String> {
    let Some(v) = version.map(|v| v.trim().trim_start_matches('=')) else {
        return Vec::new();
    };
    let exact = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c));
    match exact && v.starts_with(|c: char| c.is_ascii_digit()) {
        true => vec![format!("v{v}"), v.to_string()],
        false => Vec::new(),
    }
}

fn clone(url: &str, version: Option<&str>) -> Result<Fetched, InstallError> {
    let fail = |message: String| InstallError::Fetch {
        source_text: url.to_string(),
        message,
    };
    if url.starts_with('-') {
        return Err(fail("a source may not start with `-`".into()));
    }
    let temp = tempfile::Builder::new()
        .prefix("kaged-fetch-")
        .tempdir()
        .map_err(|e| fail(format!("cannot create a directory to clone into: {e}")))?;
    let dir = temp.path().join("source");
    let mut tried = Vec::new();
    let mut branches: Vec<Option<String>> = version_tags(version).into_iter().map(Some).collect();
    branches.push(None);
    for branch in branches {
        if dir.exists() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        match run_clone(url, branch.as_deref(), &dir) {
            Ok(()) => {
                return Ok(Fetched {
                    dir,
                    _temp: Some(temp),
                })
            }
            Err(why) => tried.push(match &branch {
                Some(b) => format!("at {b}: {why}"),
                None => why,
            }),
        }
    }
    Err(fail(tried.join("; ")))
}

/// `git clone --depth 1 [--branch B] -- URL DIR`, no prompt, bounded by
/// [`GIT_FETCH_TIMEOUT`]; the last line git wrote on failure.
fn run_clone(url: &str, branch: Option<&str>, dir: &Path) -> Result<(), String> {
    let mut cmd = Command::new("git");
    cmd.args(["clone", "--quiet", "--depth", "1"]);
    if let Some(b) = branch {
        cmd.args(["--branch", b]);
    }
    cmd.arg("--")
        .arg(url)
        .arg(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("cannot run git: {e}"))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(_)) => {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut err);
                }
                let last = err.lines().rev().find(|l| !l.trim().is_empty());
                return Err(last.unwrap_or("git clone failed").trim().to_string());
            }
            Ok(None) if started.elapsed() > GIT_FETCH_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "git clone took longer than {} s",
                    GIT_FETCH_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
            Err(e) => return Err(format!("cannot wait for git: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_version_names_its_tags() {
        assert_eq!(version_tags(Some("1.2.0")), ["v1.2.0", "1.2.0"]);
        assert_eq!(version_tags(Some("=1.2.0")), ["v1.2.0", "1.2.0"]);
        assert!(version_tags(Some("^1.2")).is_empty());
        assert!(version_tags(Some(">=1, <2")).is_empty());
        assert!(version_tags(None).is_empty());
    }

    #[test]
    fn sources_parse_by_their_scheme() {
        for (text, git) in [
            (
                "https://example.com/x.git",
                Some("https://example.com/x.git"),
            ),
            (
                "git+https://example.com/x.git",
                Some("https://example.com/x.git"),
            ),
            ("file:///srv/x", Some("file:///srv/x")),
            ("git+file:///srv/x", Some("file:///srv/x")),
            ("/srv/x", None),
        ] {
            match (PackageSource::parse(text), git) {
                (PackageSource::Git { url }, Some(want)) => assert_eq!(url, want),
                (PackageSource::Dir(d), None) => assert_eq!(d, Path::new(text)),
                (other, _) => panic!("{text}: {other:?}"),
            }
        }
    }
}
