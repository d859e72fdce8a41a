//! Cage failures, named: when a caged plugin fails a case and its stderr
//! (or an error answer it sent) shows an error the cage explains — `EROFS` or `EACCES` writing a path
//! the cage keeps read-only, `ENOENT` (or `EACCES`) on a path that exists
//! on this machine but not in the cage, `ENETUNREACH` or a failed name
//! lookup without a network — the case's detail says so and names the
//! capability that would allow it ([`CagePolicy::access`] decides what a
//! path is in the cage). A path under the run's config root is named as
//! its `config:/` grant (`$KAGED_CONFIG_ROOT/memory/x` →
//! `write:fs:config:/memory`).
//!
//! The error is recognised in the forms libc, Rust's `std::io::Error` and
//! Python's `OSError` print it (`Read-only file system (os error 30)`,
//! `[Errno 30] Read-only file system: '/x'`, `EROFS`); the path is the
//! first absolute path on the same line.

use std::path::{Path, PathBuf};

use kaged_host_core::cage::{normalize, Access, CagePolicy, NetMode};

/// An error the cage can cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Errno {
    ReadOnly,
    Denied,
    Missing,
    NoNetwork,
}

impl Errno {
    fn name(self) -> &'static str {
        match self {
            Errno::ReadOnly => "EROFS",
            Errno::Denied => "EACCES",
            Errno::Missing => "ENOENT",
            Errno::NoNetwork => "ENETUNREACH",
        }
    }
}

const FORMS: &[(Errno, &[&str])] = &[
    (
        Errno::ReadOnly,
        &[
            "Read-only file system",
            "EROFS",
            "os error 30)",
            "[Errno 30]",
        ],
    ),
    (
        Errno::Denied,
        &["Permission denied", "EACCES", "os error 13)", "[Errno 13]"],
    ),
    (
        Errno::Missing,
        &[
            "No such file or directory",
            "ENOENT",
            "os error 2)",
            "[Errno 2]",
        ],
    ),
    (
        Errno::NoNetwork,
        &[
            "Network is unreachable",
            "ENETUNREACH",
            "os error 101)",
            "[Errno 101]",
            "Temporary failure in name resolution",
            "Name or service not known",
        ],
    ),
];

fn errno(line: &str) -> Option<Errno> {
    FORMS
        .iter()
        .find(|(_, forms)| forms.iter().any(|f| line.contains(f)))
        .map(|(e, _)| *e)
}

/// The first absolute path of `line` (after a space, quote, `(`, `=`, `:`
/// or at the start), without trailing punctuation.
fn path_in(line: &str) -> Option<PathBuf> {
    let bytes = line.as_bytes();
    let start = (0..bytes.len()).find(|&i| {
        bytes[i] == b'/'
            && bytes
                .get(i + 1)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'.' || *c == b'_')
            && (i == 0 || b" '\"(=:`".contains(&bytes[i - 1]))
    })?;
    let rest = &line[start..];
    let end = rest
        .find(|c: char| c.is_whitespace() || "'\"`)".contains(c))
        .unwrap_or(rest.len());
    let p = rest[..end].trim_end_matches([':', ';', ',', '.']);
    Some(PathBuf::from(p))
}

/// The capability a plugin would declare for `path`: `config:/<dir>` for a
/// path under the run's config root (its first directory there), else the
/// path itself.
fn grant_path(path: &Path, config_root: Option<&Path>) -> String {
    if let Some(rest) = config_root.and_then(|root| under_root(path, root)) {
        return match rest.components().next() {
            Some(first) => format!("config:/{}", first.as_os_str().to_string_lossy()),
            None => "config:/".to_string(),
        };
    }
    path.display().to_string()
}

/// What a lane's config root adds to the run's root's name (`-lane-N`,
/// `RunContext::for_lane`).
pub(crate) const LANE_ROOT_SUFFIX: &str = "-lane-";

/// `path` relative to the run's config root `root`, or to a lane's own
/// root beside it (`ROOT-lane-N`, `RunContext::for_lane`).
fn under_root<'a>(path: &'a Path, root: &Path) -> Option<&'a Path> {
    if let Ok(rest) = path.strip_prefix(root) {
        return Some(rest);
    }
    let parent = root.parent()?;
    let rest = path.strip_prefix(parent).ok()?;
    let first = rest.components().next()?.as_os_str().to_str()?;
    let lane = first.strip_prefix(root.file_name()?.to_str()?)?;
    let n = lane.strip_prefix(LANE_ROOT_SUFFIX)?;
    n.parse::<usize>().ok()?;
    rest.strip_prefix(first).ok()
}

/// Why the cage, and not the plugin's logic, explains `errno` on `path`,
/// and the capability that would allow it.
fn explain(
    errno: Errno,
    path: &Path,
    policy: &CagePolicy,
    config_root: Option<&Path>,
) -> Option<(String, String)> {
    let path = normalize(path);
    // A lane's own config root stands for the run's, whose policy this is.
    let path = config_root
        .and_then(|root| under_root(&path, root).map(|rest| root.join(rest)))
        .unwrap_or(path);
    let home = &policy.chdir;
    let exists = path.exists();
    let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let write = |p: &Path| format!("write:fs:{}", grant_path(p, config_root));
    let under_config = config_root.is_some_and(|r| under_root(&path, r).is_some());
    match (errno, policy.access(&path)) {
        (Errno::ReadOnly | Errno::Denied, Access::ReadOnly) if path.starts_with(home) => {
            let grant = "write:fs:config:/<dir>".to_string();
            Some((
                format!(
                    "the plugin directory {} is its HOME and read-only in the cage: write under a \
                     declared `write:fs:` path instead (e.g. `{grant}`, then \
                     $KAGED_CONFIG_ROOT/<dir>)",
                    home.display()
                ),
                grant,
            ))
        }
        (Errno::ReadOnly | Errno::Denied, Access::ReadOnly) => {
            let grant = write(&path);
            Some((
                format!(
                    "{} is read-only in the cage: declare `{grant}`",
                    path.display()
                ),
                grant,
            ))
        }
        (Errno::Missing | Errno::Denied | Errno::ReadOnly, Access::Hidden) if under_config => {
            let grant = write(&path);
            Some((
                format!(
                    "{} is under the config root ($KAGED_CONFIG_ROOT), where the plugin may \
                     write only what it declares: declare `{grant}`",
                    path.display()
                ),
                grant,
            ))
        }
        (Errno::Missing | Errno::Denied, Access::Hidden) if exists => {
            let grant = format!("read:fs:{}", path.display());
            Some((
                format!(
                    "{} exists on this machine but not in the cage: declare `{grant}` (or \
                     `write:fs:` to write it)",
                    path.display()
                ),
                grant,
            ))
        }
        (Errno::Missing | Errno::Denied | Errno::ReadOnly, Access::Hidden)
            if parent.is_dir() && policy.access(&parent) == Access::Hidden =>
        {
            let grant = write(&parent);
            Some((
                format!(
                    "{} is not in the cage: declare `{grant}` to create files there",
                    parent.display()
                ),
                grant,
            ))
        }
        _ => None,
    }
}

/// The cage's likely part in a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CageDiagnosis {
    /// `caged, this failure looks caused by the cage: …` for the detail.
    pub text: String,
    /// The capability that would allow what failed (`write:fs:config:/memory`,
    /// `net:<host>:<port>`).
    pub grant: String,
}

/// The cage's likely part in a failure whose plugin stderr lines and
/// error-answer messages are `lines`: `caged, this looks like the cage:
/// ENOENT on /x: /x exists on this machine but not in the cage: declare
/// `read:fs:/x``; `None` when no line points at the cage. `config_root`
/// is the run's (`$KAGED_CONFIG_ROOT`): a path under it is named as the
/// `config:/` grant that would allow it.
pub(crate) fn diagnose<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    policy: &CagePolicy,
    config_root: Option<&Path>,
) -> Option<CageDiagnosis> {
    for line in lines {
        let Some(e) = errno(line) else { continue };
        let found = if e == Errno::NoNetwork {
            (policy.net.mode == NetMode::None).then(|| {
                (
                    format!(
                        "{}: the cage has no network (`net:[]`, or no `net:` capability): \
                         declare what it connects to, `net:<host>:<port>`",
                        e.name()
                    ),
                    "net:<host>:<port>".to_string(),
                )
            })
        } else {
            path_in(line).and_then(|p| {
                explain(e, &p, policy, config_root)
                    .map(|(w, grant)| (format!("{} on {}: {w}", e.name(), p.display()), grant))
            })
        };
        if let Some((why, grant)) = found {
            return Some(CageDiagnosis {
                text: format!(
                    "caged, this failure looks caused by the cage: {why} (from: {})",
                    kaged_plugin_protocol::text::cut(line.trim(), 200)
                ),
                grant,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_found_in_the_usual_forms() {
        let p = |l: &str| path_in(l).map(|p| p.display().to_string());
        assert_eq!(
            p("OSError: [Errno 30] Read-only file system: '/opt/x/state.json'").as_deref(),
            Some("/opt/x/state.json")
        );
        assert_eq!(
            p("error: cannot write /var/lib/x: Read-only file system (os error 30)").as_deref(),
            Some("/var/lib/x")
        );
        assert_eq!(p("no path here (os error 2)"), None);
        assert_eq!(
            errno("Read-only file system (os error 30)"),
            Some(Errno::ReadOnly)
        );
        assert_eq!(
            errno("[Errno 101] Network is unreachable"),
            Some(Errno::NoNetwork)
        );
        assert_eq!(errno("all fine"), None);
    }

    #[test]
    fn a_path_under_the_config_root_is_named_as_its_config_grant() {
        let root = Path::new("/tmp/cfg");
        assert_eq!(
            grant_path(Path::new("/tmp/cfg/memory/notes.json"), Some(root)),
            "config:/memory"
        );
        assert_eq!(grant_path(Path::new("/tmp/cfg"), Some(root)), "config:/");
        assert_eq!(grant_path(Path::new("/var/x"), Some(root)), "/var/x");
        assert_eq!(grant_path(Path::new("/var/x"), None), "/var/x");
    }

    #[test]
    fn a_path_under_a_lanes_own_root_is_named_as_its_config_grant_too() {
        let root = Path::new("/tmp/cfg");
        assert_eq!(
            grant_path(Path::new("/tmp/cfg-lane-3/memory/notes.json"), Some(root)),
            "config:/memory"
        );
        for other in [
            "/tmp/cfg-lane-x/memory",
            "/tmp/cfgother/memory",
            "/tmp/cfg-lane-/m",
        ] {
            assert_eq!(grant_path(Path::new(other), Some(root)), other);
        }
    }
}
